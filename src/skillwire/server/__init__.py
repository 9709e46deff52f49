"""The Skills extension for the SDK's servers: `SkillsExtension` and the `SkillService` behind it, over any source."""

"""The host side: `Host` (`host.py`) and the rules it applies.

The rules are pure (no I/O): entries, verification, registry, approvals, the acting window and security
policy. `Host` drives them over the SDK client (`skillwire.client`), the disk cache (`skillwire.cache`) and an
approval store (`approvals.JsonApprovalStore` writes one file); `prompt.TerminalPrompt` asks on a terminal and
`tools.skill_tools` hands a `Host` to a model. Import the public names from `skillwire`.
"""

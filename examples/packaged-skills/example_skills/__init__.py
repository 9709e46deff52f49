"""An example package shipping a skill in its `skills/` folder (never imported by `skillwire serve --packages`)."""

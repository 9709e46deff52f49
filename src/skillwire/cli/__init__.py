"""The `skillwire` command line."""

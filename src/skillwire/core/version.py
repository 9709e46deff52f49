"""This release's version, in one place: `skillwire.__version__`, the server's `serverInfo` and the catalog page."""

__version__ = "0.1.0"

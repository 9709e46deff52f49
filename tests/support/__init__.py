"""Helpers shared by the wire tests: real server processes, real transports, the SDK client."""

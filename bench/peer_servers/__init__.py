"""Servers that `bench.peers` runs beside skillwire; each is a script started by path in its own interpreter."""

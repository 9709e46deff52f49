"""The pure core: the spec's rules as values and functions (names, URIs, frontmatter, manifests, catalogs, search,
the host's rules). Nothing here does I/O or imports the MCP SDK's client or server; every other package builds on it.
"""

"""Where skills come from. Each source produces an immutable `Catalog` snapshot."""

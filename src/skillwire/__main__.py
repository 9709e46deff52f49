"""`python -m skillwire` runs the command line."""

from skillwire.cli.main import main

raise SystemExit(main())

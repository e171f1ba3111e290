import sys

from hermes_core.cli.main import main

sys.exit(main())

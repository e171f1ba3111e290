import sys

from hermes_core.cli.entry import main

sys.exit(main())

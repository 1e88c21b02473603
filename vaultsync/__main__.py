import sys

from vaultsync.cli.main import main

sys.exit(main())

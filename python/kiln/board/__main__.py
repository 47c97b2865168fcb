"""python3 -m kiln.board LOGDIR --out report.html: one self-contained HTML page of the logs."""
import sys

from . import main

sys.exit(main())

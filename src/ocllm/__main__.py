import sys

from ocllm.cli import main

sys.exit(main())

"""``python -m agentmsg``."""

from __future__ import annotations

import sys

from agentmsg.cli import main

sys.exit(main())

#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-tpcb: the ssd-cache-oltp report."""
import os
import runpy
import sys

sys.argv[0] = os.path.join(os.path.dirname(__file__), "ssd-cache-oltp.py")
runpy.run_path(sys.argv[0], run_name="__main__")

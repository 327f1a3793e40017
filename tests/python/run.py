"""Runs the Python package's tests with pytest; exit 77 (meson's skip), saying why, when
pytest or numpy is missing from this Python."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f'skipped: {sys.executable} cannot import {e.name} '
          '(apt-get install python3-pytest python3-numpy)')
    sys.exit(77)
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', os.path.dirname(os.path.abspath(__file__))]))

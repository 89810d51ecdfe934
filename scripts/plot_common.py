"""What the plot scripts share: writing a figure atomically.

Imported by scripts/plot_*.py (run as /usr/bin/python3 scripts/plot_X.py, so
this folder is on sys.path).
"""

import os
import tempfile


def save_figure(fig, path, dpi=120):
    """Writes `fig` to `path` atomically: a temporary file in the same
    folder, then a rename, so that a reader never sees half an image; the
    file gets the usual 0644 (mkstemp's 0600 is for the temporary only)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=os.path.splitext(path)[1] or ".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise

"""What the plot scripts share: messages on stderr, errors, writing a figure
and the record of what was drawn.

Imported by scripts/plot_*.py (run as /usr/bin/python3 scripts/plot_X.py, so
this folder is on sys.path).
"""

import json
import math
import os
import sys
import tempfile

import matplotlib


IMAGE_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")


class Script:
    """Prefixes every line a script prints on stderr with its name, so that
    its progress and errors read apart from the simulator's in a pipeline."""

    def __init__(self, name):
        self.name = name

    def say(self, message):
        print(f"{self.name}: {message}", file=sys.stderr, flush=True)

    def fail(self, message):
        print(f"{self.name}: error: {message}", file=sys.stderr, flush=True)
        sys.exit(1)

    def check_output(self, path, flag="-o"):
        """Fails before any work when `path` cannot be written: a folder that
        is not there, or an image format matplotlib does not write."""
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            self.fail(f"{flag} {path}: expected a file in an existing folder, found no "
                      f"folder {folder}")
        extension = os.path.splitext(path)[1].lower()
        if flag == "-o" and extension and extension[1:] not in IMAGE_FORMATS:
            self.fail(f"{flag} {path}: expected an image file name ending "
                      f"{', '.join('.' + f for f in IMAGE_FORMATS)}, found '{extension}'")


def _atomic_write(path, write):
    """Runs write(temporary path) then renames it to `path`, so that a reader
    never sees half a file; the file gets the usual 0644 (mkstemp's 0600 is
    for the temporary only)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=os.path.splitext(path)[1] or ".png")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


# Per format, the metadata that would carry the matplotlib version or a
# date: left out, so that the same input gives the same bytes.
UNDATED = {
    ".png": {"Software": None},
    ".svg": {"Creator": None, "Date": None},
    ".pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


def save_figure(fig, path, dpi=120):
    """Writes `fig` to `path` atomically, the same bytes for the same input."""
    extension = os.path.splitext(path)[1].lower()
    matplotlib.rcParams["svg.hashsalt"] = "clustersim"  # else SVG ids are random
    _atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi, format=extension[1:] or "png",
                                                metadata=UNDATED.get(extension)))


def figure_pixels(fig, dpi=120):
    w, h = fig.get_size_inches()
    return [int(round(w * dpi)), int(round(h * dpi))]


def _finite(value):
    """JSON has no NaN: a value that is not a number is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_drawn(path, record):
    """Writes the record of what a figure drew (--data FILE.json): values
    read back from the drawn artists, for tests and for anyone who wants the
    numbers behind the picture."""
    text = json.dumps(_finite(record), indent=1) + "\n"

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    _atomic_write(path, write)

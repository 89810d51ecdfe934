# Sourced by the plot scripts' ctests (tests/scripts/check_plot_*.sh).
# Needs $python (Debian's /usr/bin/python3) and $out (a scratch folder).

# Fails unless FILE is a PNG of WIDTH x HEIGHT pixels.
expect_png_size() {
  local file=$1 want="$2 $3" size
  [[ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] ||
    { echo "$file is not a PNG"; exit 1; }
  size=$("$python" -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print(*struct.unpack('>II', d[16:24]))" "$file")
  [[ "$size" == "$want" ]] || { echo "$file is $size, expected $want"; exit 1; }
}

# Fails unless SCRIPT refuses INPUT with MESSAGE (a grep pattern) on stderr
# and writes no image; any further arguments are passed to SCRIPT.
expect_refused() {
  local script=$1 input=$2 message=$3
  shift 3
  if "$python" "$script" "$input" -o "$out/refused.png" "$@" 2> "$out/err"; then
    echo "$input was accepted by $script"; exit 1
  fi
  grep -q "$message" "$out/err" || { cat "$out/err"; exit 1; }
  [[ ! -e "$out/refused.png" ]] || { echo "an image was written for $input"; exit 1; }
}

# Fails unless the Python expression EXPR is true of `d`, the record of what
# a plot script drew (its --data FILE.json), and prints WHAT and the record
# when it is not. EXPR may use close(a, b, rel=1e-6), rows(CSV) (a sweep or
# validate CSV's rows, '#' lines skipped), load(JSON), the modules math and
# statistics, and args, the arguments after WHAT.
expect_drawn() {
  local file=$1 expr=$2 what=$3
  shift 3
  "$python" - "$file" "$expr" "$@" <<'PY' || { echo "expected the plot to draw $what"; exit 1; }
import csv, json, math, statistics, sys
d = json.load(open(sys.argv[1]))
names = {
    "d": d, "args": sys.argv[3:], "math": math, "statistics": statistics,
    "close": lambda a, b, rel=1e-6: a is not None and abs(a - b) <= rel * max(abs(b), 1e-12),
    "rows": lambda p: list(csv.DictReader(l for l in open(p) if not l.startswith("#"))),
    "load": lambda p: json.load(open(p)),
}
if not eval("(" + sys.argv[2] + "\n)", names):  # parenthesised: EXPR may span lines
    print(json.dumps(d, indent=1)[:4000])
    sys.exit(1)
PY
}

#!/usr/bin/env bash
# A real workload end to end (docs/real-traces.md): capture headless Chromium rendering
# local pages as the foreground app, with a push-like background process (small periodic
# reads and writes) and an I/O-intensive one (streaming a large file), then run the
# hybrid-cache experiment on the captured trace next to the synthetic traces, and the
# reclaim policies (stock, fmp, memcg-low, mglru) on it next to the gallery-usb trace.
#
# Needs root (ftrace, drop_caches) and Debian's chromium (installed if missing).
# Usage: scripts/capture-chromium.sh [OUT_DIR]        (default target/chromium)
# Environment: PAGES (default 6) pages to render; BIG_MB (default 256) size of the
# streamed file, STREAM_MBPS (default 20) its rate; SCALE (default 0.25) length of the
# synthetic traces beside it; RECLAIM_FRACTION (default 0.15) memory of the reclaim runs
# as a fraction of each trace's footprint.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-target/chromium}
PAGES=${PAGES:-6}
BIG_MB=${BIG_MB:-256}
STREAM_MBPS=${STREAM_MBPS:-20}
SCALE=${SCALE:-0.25}
RECLAIM_FRACTION=${RECLAIM_FRACTION:-0.15}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ "$(id -u)" != 0 ]; then
    echo "capture-chromium: ftrace needs root" >&2
    exit 1
fi
if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

echo "== building mobmem (release)"
cargo build --release -q -p mobmem-cli
MOBMEM=$PWD/target/release/mobmem

# Work files on the disk file system (tmpfs pages do not show in the filemap events).
WORK=$(mktemp -d "$OUT/work.XXXXXX")
BG_PIDS=()
cleanup() {
    for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "== writing $PAGES pages with images to $WORK/site"
python3 - "$WORK/site" "$PAGES" <<'EOF'
import os, random, struct, sys, zlib

site, pages = sys.argv[1], int(sys.argv[2])
os.makedirs(site, exist_ok=True)
rng = random.Random(7)

def png(path, width, height):
    # Noisy pixels, so the file is about as large as its raw image (real photos are).
    rows = b"".join(b"\x00" + bytes(rng.getrandbits(8) for _ in range(width * 3))
                    for _ in range(height))
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows, 1)))
        f.write(chunk(b"IEND", b""))

words = "memory page cache flash swap reclaim process foreground background".split()
for p in range(pages):
    images = []
    for i in range(4):
        name = f"img-{p}-{i}.png"
        png(os.path.join(site, name), 320 + 40 * i, 240)
        images.append(name)
    text = " ".join(rng.choice(words) for _ in range(3000))
    body = "".join(f'<p>{text[j:j + 400]}</p><img src="{img}">'
                   for j, img in zip(range(0, 1600, 400), images))
    with open(os.path.join(site, f"page{p}.html"), "w") as f:
        f.write(f"<!doctype html><html><head><title>page {p}</title>"
                f"<style>body{{font-family:sans-serif}} img{{width:100%}}</style></head>"
                f"<body><h1>Page {p}</h1>{body}</body></html>")
EOF

echo "== background: a push-like task and a $BIG_MB MiB stream at ${STREAM_MBPS} MB/s"
head -c 1048576 /dev/urandom > "$WORK/push-state"
dd if=/dev/urandom of="$WORK/big.bin" bs=1M count="$BIG_MB" status=none
# One process each, as an app's service would be.
python3 - "$WORK/push-state" "$WORK/push-log" <<'EOF_PUSH' &
# Push-like: every half second read 4 KiB of state at a random place and append a small
# record to a log, flushed to storage (a sync client).
import os, random, sys, time
state, log = sys.argv[1], sys.argv[2]
rng = random.Random(3)
size = os.path.getsize(state)
with open(log, "ab") as out:
    while True:
        with open(state, "rb") as f:
            f.seek(rng.randrange(0, size - 4096) & ~4095)
            f.read(4096)
        out.write(b"%d %s\n" % (time.time_ns(), b"x" * 200))
        out.flush()
        os.fsync(out.fileno())
        time.sleep(0.5)
EOF_PUSH
PUSH=$!
BG_PIDS+=("$PUSH")
python3 - "$WORK/big.bin" "$STREAM_MBPS" <<'EOF_STREAM' &
# I/O-intensive: stream a large file at a steady rate, dropping it from the cache after
# each pass (POSIX_FADV_DONTNEED) so that every pass reads from storage.
import os, sys, time
path, rate = sys.argv[1], float(sys.argv[2]) * 1e6
chunk = 256 * 1024
fd = os.open(path, os.O_RDONLY)
start, done = time.monotonic(), 0
while True:
    data = os.read(fd, chunk)
    if not data:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.lseek(fd, 0, os.SEEK_SET)
        continue
    done += len(data)
    ahead = done / rate - (time.monotonic() - start)
    if ahead > 0:
        time.sleep(ahead)
EOF_STREAM
STREAM=$!
BG_PIDS+=("$STREAM")
sleep 1

cat > "$WORK/render.sh" <<EOF
#!/bin/sh
# Render each page headless, one browser run per page (a user opening them in turn).
# Each opening is marked as a user input to the browser process just started, with an
# atrace-style marker (B|PID|NAME), as Android's input dispatcher names the app's
# process. Without background networking, Chromium does not try the closed network.
MARKER=/sys/kernel/tracing/trace_marker
i=0
for page in "$WORK"/site/page*.html; do
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \\
        --no-first-run --disable-background-networking --disable-component-update \\
        --disable-sync --disable-quic \\
        --user-data-dir="$WORK/profile" --window-size=1280,2400 \\
        --screenshot="$WORK/shot-\$i.png" "file://\$page" >/dev/null 2>&1 &
    browser=\$!
    if [ -w \$MARKER ]; then
        echo "B|\$browser|deliverInputEvent open page\$i" > \$MARKER
        echo "E|\$browser" > \$MARKER
    fi
    wait \$browser || true
    i=\$((i + 1))
done
EOF
chmod +x "$WORK/render.sh"

TRACE=$OUT/chromium.mmt
echo "== capturing (foreground: the renderer script and the Chromium it starts; background: $PUSH, $STREAM)"
"$MOBMEM" capture --out "$TRACE" --drop-caches --marked-only \
    --background "$PUSH" --background "$STREAM" \
    -- "$WORK/render.sh" | tee "$OUT/import-report.txt"
ls "$WORK"/shot-*.png >/dev/null 2>&1 || echo "warning: Chromium wrote no screenshots" >&2

echo "== the captured trace"
"$MOBMEM" trace info "$TRACE" | tee "$OUT/trace-info.txt"

echo "== hybrid-cache on the captured trace, beside the synthetic traces"
cat > "$OUT/hybrid-cache-real.toml" <<EOF
# experiments/hybrid-cache.toml's sweep on the captured Chromium trace and the two
# synthetic traces (shortened to scale $SCALE).
name = "hybrid-cache-real"
title = "App-state-aware buffer cache: captured Chromium trace and synthetic traces"
seed = 1

[[workload]]
name = "chromium-capture"
trace = "$TRACE"

[[workload]]
name = "chrome-push"
preset = "chrome-push"
scale = $SCALE

[[workload]]
name = "app-switching"
preset = "app-switching"
scale = $SCALE

[sweep]
policies = ["hybrid-lru", "hybrid-2q", "clock-dwf", "app-aware"]
memory_fraction = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
dram_fraction = [0.05]

[cost]
model = "paper-relative"
EOF
"$MOBMEM" run "$OUT/hybrid-cache-real.toml" --out "$OUT/report" | tee "$OUT/hybrid-cache-real.txt"

echo "== reclaim policies on the captured trace, beside the synthetic gallery-usb trace"
# Each trace on its own machine of RECLAIM_FRACTION of its footprint (0.15 puts the
# gallery-usb trace at about the reproduction's 128 MiB); swap is sized to each trace.
# Inputs are the trace_marker lines (one per page opened); should the capture have
# none, a note on stderr (kept in reclaim.txt) says what that means for the numbers.
"$MOBMEM" gen gallery-usb --scale "$SCALE" --out "$OUT/gallery-usb.mmt"
"$MOBMEM" reclaim --trace "$TRACE" --trace "$OUT/gallery-usb.mmt" \
    --policy stock,fmp,memcg-low,mglru --memory-fraction "$RECLAIM_FRACTION" 2>&1 |
    tee "$OUT/reclaim.txt"
echo "== done: $TRACE, $OUT/report/index.html"

#!/usr/bin/env bash
# Makes the real media and text files the selective-page-cache reproduction reads:
# MPEG-4 videos encoded by ffmpeg (Debian's package, installed here if missing) at
# increasing sizes, and real English text from Debian's license files.
#
#   scripts/make-media.sh [DIR]      (default: target/media)
#
# Idempotent: files already made are kept. Writes DIR/.complete when everything is there.
set -euo pipefail
dir=${1:-target/media}
mkdir -p "$dir"

if ! command -v ffmpeg >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: ffmpeg is missing; install it (apt-get install ffmpeg) or run this as root" >&2
        exit 1
    fi
    echo "installing ffmpeg from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq ffmpeg >/dev/null
fi

# Sizes in MiB. The encoder's bit rate is fixed, so the duration sets the size; the
# file is then cut to the exact size so every run reads the same bytes.
sizes="1 2 4 8 16 32"
bitrate_kbit=4000
for mib in $sizes; do
    out="$dir/video-${mib}MiB.mp4"
    [ -f "$out" ] && continue
    seconds=$(( mib * 8 * 1024 / bitrate_kbit + 2 ))
    tmp="$dir/.video-${mib}MiB.tmp.mp4"
    # testsrc2 is a moving synthetic picture; mandelbrot adds detail so the encoder
    # spends its bits like on camera footage.
    ffmpeg -nostdin -loglevel error -y \
        -f lavfi -i "mandelbrot=size=640x360:rate=25" \
        -f lavfi -i "testsrc2=size=640x360:rate=25" \
        -filter_complex "[0][1]blend=all_mode=average,noise=alls=12:allf=t" \
        -t "$seconds" -c:v mpeg4 -b:v "${bitrate_kbit}k" -an "$tmp"
    head -c $(( mib * 1024 * 1024 )) "$tmp" > "$out.part"
    rm -f "$tmp"
    mv "$out.part" "$out"
done

text="$dir/text-licenses.txt"
if [ ! -f "$text" ]; then
    cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 \
        /usr/share/common-licenses/LGPL-3 /usr/share/common-licenses/MPL-2.0 > "$text.part"
    mv "$text.part" "$text"
fi
touch "$dir/.complete"
echo "media in $dir" >&2

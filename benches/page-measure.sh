#!/usr/bin/env bash
# Measures the search page on loopback against the fakes: the weight of `/` (HTML of a
# search with results on every platform, plus the style sheet) and the time to first
# byte of that search with a warm buffer (the second and later loads). Builds nothing:
# run `cargo build -p besluitbron-server -p besluitbron-sim` (or `--release`, with
# PROFILE=release) first. Needs curl.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CARGO_TARGET_DIR:-target}/${PROFILE:-debug}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin/besluitbron-sim" fakes --listen 127.0.0.1:0 >"$work/fakes" 2>/dev/null &
for _ in $(seq 100); do [ "$(wc -l <"$work/fakes")" -ge 6 ] && break; sleep 0.1; done
args=()
while read -r platform url; do args+=(--platform-url "$platform=$url"); done <"$work/fakes"
port=$(( 20000 + RANDOM % 20000 ))
"$bin/besluitbron" serve --listen "127.0.0.1:$port" --data-dir "$work/data" "${args[@]}" >"$work/log" 2>&1 &
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -fs "$base/readyz" >/dev/null && break; sleep 0.1; done
url="$base/?q=stikstof"
curl -fs -o "$work/cold.html" -w 'cold search: first byte %{time_starttransfer} s, %{size_download} bytes\n' "$url"
css=$(curl -fs "$base/assets/page.css" | wc -c)
html=$(curl -fs "$url" | wc -c)
echo "page weight of $url: HTML $html + CSS $css = $((html + css)) bytes"
for i in 1 2 3 4 5; do
    curl -fs -o /dev/null -w "warm search $i: first byte %{time_starttransfer} s\n" "$url"
done

#!/usr/bin/env bash
# Runs a firmware example (its folder is the argument) in QEMU without and with poison
# (both must match TFLite Micro), then checks the ELF: each usmp pool section has exactly
# the size the plan printed, and no allocator is linked in; and a link without usmp's
# fragment (usmp.x from usmp-build, usmp_pools.x from usmp_pools!) fails, naming it.
# Prints the section table the README shows.
# Needs: the example's rustup target, qemu-system-arm, readelf (binutils).
set -euo pipefail
dir=$1
cd "$(dirname "$0")/$dir"
target=$(sed -n 's/^target = "\(.*\)"/\1/p' .cargo/config.toml)
package=$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | head -1)
# "link-arg=-Tusmp_pools.x" -> usmp_pools; the symbol only that fragment defines.
fragment=$(grep -o 'link-arg=-Tusmp[a-z_]*\.x' .cargo/config.toml | sed 's/link-arg=-T//; s/\.x$//')
guard=__${fragment}_x_not_linked__pass_link_arg_T${fragment}_x
elf=target/$target/release/$package
log=target/check-run.log

# The sizes must not depend on where the repository is checked out: panic locations put
# source paths in .rodata, so the checkout and cargo's registry are mapped to fixed names
# (appended to the example's own target rustflags; the README's tables come from this).
root=$(cd ../.. && pwd)
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
remap=(--config "target.$target.rustflags = [\"--remap-path-prefix=$root=/usmp\", \"--remap-path-prefix=$registry=/registry\"]")

mkdir -p target
cargo run --release "${remap[@]}" | tee "$log"
cargo run --release --features poison "${remap[@]}" | tee target/check-run-poison.log
cargo build --release "${remap[@]}"  # the ELF measured below is the one without poison

# "[ 4] .usmp.flash PROGBITS 00004ea0 014ea0 004140 ..." -> name and size in bytes
sections=$(readelf -SW "$elf" | sed -n 's/^ *\[ *[0-9]*\] *//p')
size_of() {
  local hex
  hex=$(awk -v s="$1" '$1 == s { print $5 }' <<<"$sections")
  if [ -n "$hex" ]; then echo $((16#$hex)); fi
}

status=0
table="| section | bytes | planned |"$'\n'"|---|---:|---:|"
for s in .text .rodata .data .bss; do
  table+=$'\n'"| \`$s\` | $(size_of "$s") | |"
done
# "  pool dtcm    4016 bytes in .usmp.dtcm", as the firmware printed its plan
while read -r _ name planned _ _ section; do
  actual=$(size_of "$section")
  table+=$'\n'"| \`$section\` (pool $name) | ${actual:-missing} | $planned |"
  if [ "${actual:-}" != "$planned" ]; then
    echo "error: section $section is ${actual:-missing} bytes, the plan says $planned" >&2
    status=1
  fi
  # A workspace pool (writable) must be NOLOAD: as loaded data it would add its size in
  # zeros to the image and be copied at start-up.
  read -r type flags < <(awk -v s="$section" '$1 == s { print $2, $7 }' <<<"$sections")
  if [[ "$flags" == *W* && "$type" != NOBITS ]]; then
    echo "error: workspace pool section $section is $type (loaded data), not NOBITS" >&2
    status=1
  fi
done < <(grep '^  pool ' "$log")
# "  image dtcm_weights 65536 bytes in .usmp.dtcm_weights.image": the images of a constant
# pool run from RAM, which Workspace::take copies into the pool's own (NOLOAD) section.
# They must be in the image the board is programmed with (PROGBITS), or there would be
# nothing to copy.
while read -r _ name planned _ _ section; do
  actual=$(size_of "$section")
  table+=$'\n'"| \`$section\` (images of pool $name) | ${actual:-missing} | $planned |"
  if [ "${actual:-}" != "$planned" ]; then
    echo "error: section $section is ${actual:-missing} bytes, the plan says $planned" >&2
    status=1
  fi
  type=$(awk -v s="$section" '$1 == s { print $2 }' <<<"$sections")
  if [ "$type" != PROGBITS ]; then
    echo "error: the images of pool $name ($section) are ${type:-missing}, not PROGBITS: not in the image, nothing to copy" >&2
    status=1
  fi
done < <(grep '^  image ' "$log")
echo
echo "$table"

# The README quotes this table between `<!-- sections DIR -->` and `<!-- end -->`: it
# must be what this build produced, so the figures cannot drift.
readme=../../README.md
# (Indented where it sits in a list item.)
quoted=$(awk -v d="$dir" '{ line = $0; sub(/^ +/, "", line) }
  line == "<!-- sections " d " -->" { on = 1; next }
  on && line == "<!-- end -->" { on = 0 } on { print line }' "$readme")
# Code (.text, .rodata) may differ by a few bytes from a build in another directory: the
# symbols' hashes follow the checkout's path, and LLVM's inlining follows their order (the
# same source measured 72,604 and 72,612 bytes of .text in two clones). Those rows match
# within 0.1 % (at least 64 bytes); every other row, the pools above all, exactly.
close_enough() {
  local a b
  [ "$(wc -l <<<"$1")" = "$(wc -l <<<"$2")" ] || return 1
  while IFS= read -r a && IFS= read -r b <&3; do
    [ "$a" = "$b" ] && continue
    local sa=${a%% | *} sb=${b%% | *}
    case "$sa" in '| `.text`' | '| `.rodata`') ;; *) return 1 ;; esac
    [ "$sa" = "$sb" ] || return 1
    local na nb
    na=$(awk -F' [|] ' '{ print $2 }' <<<"$a") nb=$(awk -F' [|] ' '{ print $2 }' <<<"$b")
    [[ "$na" =~ ^[0-9]+$ && "$nb" =~ ^[0-9]+$ ]] || return 1
    local d=$((na > nb ? na - nb : nb - na)) most=$((na / 1000 > 64 ? na / 1000 : 64))
    [ "$d" -le "$most" ] || return 1
  done < <(echo "$1") 3< <(echo "$2")
}
if ! close_enough "$quoted" "$table"; then
  echo "error: README.md's section table for $dir is not what the build produced; paste the table above between <!-- sections $dir --> and <!-- end -->:" >&2
  diff <(echo "$quoted") <(echo "$table") >&2 || true
  status=1
fi

# cortex-m-rt's reset handler zeroes __sbss..__ebss: that must be .bss itself, not the
# pools (uninitialised by design, maybe in another region) that usmp.x inserts.
symbol() { readelf -sW "$elf" | awk -v s="$1" '$8 == s { print $2 }'; }
bss_start=$((16#$(symbol __sbss))) bss_end=$((16#$(symbol __ebss)))
if [ "$bss_end" -lt "$bss_start" ] || [ $((bss_end - bss_start)) -ne "$(size_of .bss)" ]; then
  echo "error: the reset handler zeroes $bss_start..$bss_end, not .bss ($(size_of .bss) bytes)" >&2
  status=1
fi

if readelf -sW "$elf" | grep -qE '__rust_alloc|__rg_alloc|_malloc_r|\bmalloc\b'; then
  echo "error: an allocator is linked into the firmware" >&2
  status=1
fi

# A misuse of the fragment must fail the link, saying what: builds with `flags` (which
# replace the config's: RUSTFLAGS wins) in a target dir of its own (no rebuild churn).
link_must_fail() { # name, flags, what the link is, the text its error must hold
  local name=$1 flags=$2 what=$3 pattern=$4 log=target/$1.log
  if RUSTFLAGS="$flags" CARGO_TARGET_DIR=target/$name cargo build --release >"$log" 2>&1; then
    echo "error: the firmware linked $what; its pools would be misplaced silently" >&2
    status=1
  elif ! grep -q "$pattern" "$log"; then
    echo "error: linking $what failed, but not with \"$pattern\":" >&2
    tail -20 "$log" >&2
    status=1
  else
    echo "$what the link fails: $(grep -m1 "$pattern" "$log" | sed 's/^[ =]*//')"
  fi
}

# Without the fragment the pools would land wherever the default script puts them: the
# generated code refers to a symbol only the fragment defines, so that link must fail,
# naming it.
link_must_fail no-fragment "-C link-arg=-Tlink.x" "without -T$fragment.x" \
  "undefined symbol: $guard"
# The fragment passed twice: the second copy of each section is empty, so the link must
# fail saying so (the message once blamed other data in the section).
link_must_fail twice "-C link-arg=-Tlink.x -C link-arg=-T$fragment.x -C link-arg=-T$fragment.x" \
  "with -T$fragment.x twice" "passed to the linker twice"

exit $status

#!/usr/bin/env bash
# Runs prsum (the one on PATH, or $PRSUM) against bad and hostile inputs and prints, per case,
# the exit code and the first line of stderr. Each case has the exit code the README documents
# (0, 1 or 2), never a traceback or an "internal error"; `check` rows test what the output
# holds. Rows marked FAIL are defects. Usage: bash bench/badinput.sh
set -u
PRSUM=${PRSUM:-prsum}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1 PRSUM_CACHE_DIR="$work/cache"
# Bad input, not card quality, is under test: the small embedded model writes the cards fast.
export PRSUM_MODEL=small
git config --global user.name "Bad Input" && git config --global user.email bad@example.com
git config --global init.defaultBranch main

repo="$work/repo"
git init -q "$repo" && echo "a = 1" > "$repo/a.py" && git -C "$repo" add -A && git -C "$repo" commit -q -m "Start" && git -C "$repo" tag v0
echo "b = 2" > "$repo/b.py" && git -C "$repo" add -A && git -C "$repo" commit -q -m "Add b (#1)"
git init -q "$work/empty"
mkdir -p "$work/plain"
printf 'not a model\n' > "$work/text.gguf"
printf 'GGUF\003\000\000\000' > "$work/truncated.gguf"
printf '{not json' > "$work/bad.json"
printf '{%% for x in %%}' > "$work/bad.j2"
printf 'x' > "$work/file"

report() {  # report NAME EXPECTED CODE STDERR
    local first=${4%%$'\n'*} mark=ok
    if [[ $4 == *Traceback* || $4 == *"internal error"* ]] || (( $3 != $2 )); then mark=FAIL; fi
    printf '%-4s %-34s exit %-3s %s\n' "$mark" "$1" "$3" "$first"
}

row() {  # row NAME ARGS...: a bad input, exit 2
    local name=$1; shift
    local err code
    err=$("$PRSUM" "$@" 2>&1 >/dev/null); code=$?
    report "$name" 2 "$code" "$err"
}

expect() {  # expect NAME CODE ARGS...: prsum's stdout goes to $work/stdout
    local name=$1 wanted=$2; shift 2
    local err code
    err=$("$PRSUM" "$@" 2>&1 >"$work/stdout"); code=$?
    report "$name" "$wanted" "$code" "$err"
}

check() {  # check NAME TEST...: a property of what the last run left behind
    local name=$1; shift
    if "$@"; then printf '%-4s %-34s\n' ok "$name"; else printf '%-4s %-34s\n' FAIL "$name"; fi
}

lacks() {  # lacks FILE TEXT...: none of TEXT occurs in FILE
    local file=$1; shift
    for text in "$@"; do grep -qF -- "$text" "$file" && return 1; done
    return 0
}

row "not a git repository"   list HEAD --repo "$work/plain"
row "missing folder"         list HEAD --repo "$work/nowhere"
row "empty repository"       range HEAD --repo "$work/empty"
row "unknown revision"       range v0..nope --repo "$repo"
row "reversed range"         range main..v0 --repo "$repo"
row "empty range"            list main..main --repo "$repo"
row "three-dot range"        list v0...main --repo "$repo"
row "missing model"          range v0..main --repo "$repo" --model "$work/missing.gguf"
row "non-GGUF model"         range v0..main --repo "$repo" --model "$work/text.gguf"
row "truncated GGUF model"   show HEAD --repo "$repo" --model "$work/truncated.gguf" --no-cache
PRSUM_LANG=fr row "bad language (env)" list v0..main --repo "$repo"
row "context too small"      range v0..main --repo "$repo" --ctx 100
row "unwritable output"      list v0..main --repo "$repo" -o "$work/file/out.md"
row "missing --pr-meta"      list v0..main --repo "$repo" --pr-meta "$work/none.json"
row "malformed --pr-meta"    list v0..main --repo "$repo" --pr-meta "$work/bad.json"
row "broken --template"      notes v0..main --repo "$repo" --model "$work/text.gguf" --template "$work/bad.j2"
row "no range given"         range --repo "$repo"
row "server unreachable"     range v0..main --repo "$repo" --backend openai --base-url http://127.0.0.1:9
row "server on the internet" range v0..main --repo "$repo" --backend openai --base-url http://8.8.8.8:8080
row "server without URL"     range v0..main --repo "$repo" --backend openai
row "--jobs, embedded model" range v0..main --repo "$repo" --jobs 2

# --- the repository is untrusted (issue 12) ---
hostile="$work/hostile"
aws=AKIAIOSFODNN7EXAMPLE ghp=ghp_0123456789abcdefghijABCDEFGHIJ012345 password=hunter2hunter2
git init -q "$hostile" && echo "x = 1" > "$hostile/x.py" && git -C "$hostile" add -A && git -C "$hostile" commit -q -m "Start" && git -C "$hostile" tag v0
echo "y = 2" > "$hostile/y.py" && git -C "$hostile" add -A
git -C "$hostile" commit -q -m "Rotate $aws and $ghp with password=$password"
printf 'def z():\n    return 3\n' > "$hostile/z.py" && git -C "$hostile" add -A
git -C "$hostile" -c user.name=$'Eve\e]0;owned\a\e[2J' commit -q -m $'Add z \e[2J\e]8;;javascript:alert(1)\e\\click\e]8;;\e\\ <script>alert(1)</script> (#7)'
git -C "$hostile" checkout -q -b side v0 && echo "s = 1" > "$hostile/s.py" && git -C "$hostile" add -A && git -C "$hostile" commit -q -m "Side"
git -C "$hostile" checkout -q main && git -C "$hostile" merge -q --no-ff side -m "Merge branch 'side' $ghp"
expect "secrets: notes md"                0 notes v0..main --repo "$hostile"
check  "  no secret in notes md"          lacks "$work/stdout" "$aws" "$ghp" "hunter2hunter2"
expect "secrets: notes json"              0 notes v0..main --repo "$hostile" --format json
check  "  no secret in notes json"        lacks "$work/stdout" "$aws" "$ghp" "hunter2hunter2"
expect "secrets: range json"              0 range v0..main --repo "$hostile" --format json
check  "  no secret in range json"        lacks "$work/stdout" "$aws" "$ghp" "hunter2hunter2"
check  "  no secret in the card cache"    bash -c "! grep -rqF -e '$aws' -e '$ghp' -e hunter2hunter2 '$work/cache'"
esc=$'\e'
expect "escapes: list --format md"        0 list v0..main --repo "$hostile" --format md
check  "  no raw ESC, no <script>"        lacks "$work/stdout" "$esc" "<script>"
for format in terminal json; do  # neither is HTML: <script> is plain text there
    expect "escapes: list --format $format"   0 list v0..main --repo "$hostile" --format "$format"
    check  "  no raw ESC"                     lacks "$work/stdout" "$esc"
done
expect "escapes: range --format terminal" 0 range v0..main --repo "$hostile" --format terminal
check  "  no raw ESC"                     lacks "$work/stdout" "$esc"
expect "escapes: notes md"                0 notes v0..main --repo "$hostile"
check  "  no raw ESC, no <script>"        lacks "$work/stdout" "$esc" "<script>"
printf '[tool.prsum]\nbackend = "openai"\nbase_url = "http://127.0.0.1:18777"\nredact = false\n' > "$hostile/pyproject.toml"
expect "repo sets backend/base_url/redact" 0 list v0..main --repo "$hostile" --format json
check  "  masking stays on"               lacks "$work/stdout" "$aws" "$ghp"
rm "$hostile/pyproject.toml"
printf "{{ self.__init__.__globals__.__builtins__.__import__('os').popen('touch $work/pwned').read() }}" > "$work/evil.j2"
row "--template runs code"           notes v0..main --repo "$hostile" --template "$work/evil.j2"
check "  nothing ran"                test ! -e "$work/pwned"
printf '{%% include "other.j2" %%}' > "$work/include.j2"
row "--template with include"        notes v0..main --repo "$hostile" --template "$work/include.j2"
printf '\xff\xfe{{ notes.title }}' > "$work/latin1.j2"
row "--template not UTF-8"           notes v0..main --repo "$hostile" --template "$work/latin1.j2"
row "--threads 10000"                range v0..main --repo "$hostile" --threads 10000
python3 -c "print('[' * 100000 + ']' * 100000)" > "$work/deep.json"
row "--pr-meta nested deeply"        list v0..main --repo "$hostile" --pr-meta "$work/deep.json"
printf '[{"number": 7, "labels": 5}]' > "$work/types.json"
row "--pr-meta wrong types"          list v0..main --repo "$hostile" --pr-meta "$work/types.json"
err=$("$PRSUM" list v0..main --repo "$hostile" 2>&1 >&-); report "stdout closed" 2 $? "$err"
err=$("$PRSUM" list v0..main --repo "$hostile" 2>&1 >/dev/full); report "stdout on a full device" 2 $? "$err"
# A pipe whose reader is gone before prsum writes (`prsum list | head` once head has quit).
closed_pipe='import os, subprocess, sys
r, w = os.pipe(); os.close(r)
run = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, text=True)
sys.stderr.write(run.stderr); sys.exit(run.returncode)'
err=$(python3 -c "$closed_pipe" "$PRSUM" list v0..main --repo "$hostile" 2>&1); report "stdout a closed pipe" 1 $? "$err"
check  "  quietly"                        test -z "$err"
printf 'old\n' > "$work/target.md" && chmod 644 "$work/target.md" && ln -s target.md "$work/link.md"
expect "-o through a symlink"             0 list v0..main --repo "$hostile" -o "$work/link.md"
check  "  link kept, target written"      bash -c "test -L '$work/link.md' && grep -q 'Add z' '$work/target.md'"
check  "  mode 0644 kept"                 bash -c "test \$(stat -c %a '$work/target.md') = 644"

# One damaged object costs one PR: #2's blob is corrupted.
damaged="$work/damaged"
git init -q "$damaged" && echo base > "$damaged/base.txt" && git -C "$damaged" add -A && git -C "$damaged" commit -q -m init && git -C "$damaged" tag v0
for i in 1 2 3; do printf 'def f%s():\n    return %s\n' $i $i > "$damaged/m$i.py"; git -C "$damaged" add -A; git -C "$damaged" commit -q -m "Add f$i (#$i)"; done
blob=$(git -C "$damaged" rev-parse HEAD~1:m2.py); object="$damaged/.git/objects/${blob:0:2}/${blob:2}"
chmod u+w "$object" && printf 'garbage' > "$object"
expect "corrupt blob in one of three PRs"  1 range v0..main --repo "$damaged" --no-cache --format json
check  "  the other two cards written"     python3 -c "import json,sys; d=json.load(open('$work/stdout')); sys.exit(sorted(c['pr']['number'] for c in d['cards']) != [1, 3])"
cards_before=$(find "$work/cache" -name '*.json' | wc -l)
err=$(ulimit -f 1; trap '' XFSZ; "$PRSUM" range v0..HEAD~2 --repo "$damaged" --lang en 2>&1 >/dev/null); report "full disk under the card cache" 0 $? "$err"
check  "  no temporary file left"          test -z "$(find "$work/cache" -name '*.tmp')"
head=$(git -C "$damaged" rev-parse HEAD); object="$damaged/.git/objects/${head:0:2}/${head:2}"
chmod u+w "$object" && printf 'garbage' > "$object"
row "corrupt HEAD commit"            list --repo "$damaged" --last 1

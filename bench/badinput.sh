#!/usr/bin/env bash
# Runs prsum (the one on PATH, or $PRSUM) against a list of bad inputs and prints, per case,
# the exit code and the first line of stderr. Every case should exit 1 or 2, never with a
# traceback. Usage: bash bench/badinput.sh
set -u
PRSUM=${PRSUM:-prsum}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1 PRSUM_CACHE_DIR="$work/cache"
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

row() {  # row NAME ARGS...: run prsum, print exit code and first stderr line
    local name=$1; shift
    local err code
    err=$("$PRSUM" "$@" 2>&1 >/dev/null); code=$?
    local first=${err%%$'\n'*}
    local mark=ok
    if [[ $err == *Traceback* ]] || (( code != 1 && code != 2 )); then mark=FAIL; fi
    printf '%-4s %-28s exit %-3s %s\n' "$mark" "$name" "$code" "$first"
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

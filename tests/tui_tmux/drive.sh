#!/usr/bin/env bash
# Drive the real `cannpilot` TUI in tmux as an engineer would, and check the screen and the store.
#
#   launch `cannpilot` (no arguments: the demo session) at a fixed size with an isolated store
#   and config -> wait for round 1's review -> pin the top candidate -> veto the last -> steer ->
#   continue -> wait for round 2's review -> quit -> check `cannpilot sessions show --json`.
#
# Env: CANNPILOT (the console script; default: the repo's .venv), CANNPILOT_TUI_FAKE=1 (launch
# tests/tui_tmux/fake_app.py instead: the fake agent/evaluator, no g++), DRIVE_TIMEOUT (seconds per wait, default 600),
# DRIVE_KEEP=1 (keep the temp dir). Exit 0 when every check passes; screens go to $TMP/screens.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CANNPILOT="${CANNPILOT:-$ROOT/.venv/bin/cannpilot}"
WIDTH=160
HEIGHT=45
TIMEOUT="${DRIVE_TIMEOUT:-600}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/cannpilot-drive.XXXXXX")"
TMUX_SESSION="cannpilot-drive-$$"
TMUX_SOCKET="cannpilot-drive-$$"      # a private tmux server: no shared environment or options
SCREENS="$TMP/screens"
mkdir -p "$SCREENS"
STEP=0
STEER_TEXT="keep double buffering, try smaller tiles"

export CANNPILOT_STORE="$TMP/sessions.sqlite"
export CANNPILOT_CONFIG_DIR="$TMP/config"
export CANNPILOT_CACHE_DIR="$TMP/cache"
export CANNPILOT_DATA_DIR="$TMP/data"
export CANNPILOT_STATE_DIR="$TMP/state"

tmux() { command tmux -L "$TMUX_SOCKET" "$@"; }

cleanup() {
    tmux kill-server 2>/dev/null || true
    if [[ "${DRIVE_KEEP:-0}" != 1 && "${DRIVE_FAILED:-0}" != 1 ]]; then rm -rf "$TMP"; fi
}
trap cleanup EXIT

say() { printf 'drive: %s\n' "$*" >&2; }
fail() {
    DRIVE_FAILED=1
    say "FAIL: $*"
    say "last screen:"
    tmux capture-pane -p -t "$TMUX_SESSION" >&2 2>/dev/null || true
    say "screens and store kept in $TMP"
    say "FAIL: $*"
    exit 1
}
screen() { tmux capture-pane -p -t "$TMUX_SESSION"; }
snap() { STEP=$((STEP + 1)); screen >"$SCREENS/$(printf '%02d' "$STEP")-$1.txt"; }

# wait_for TEXT [TIMEOUT]: poll the screen until it shows TEXT (fixed string).
wait_for() {
    local text="$1" limit="${2:-$TIMEOUT}" start=$SECONDS
    local now
    while (( SECONDS - start < limit )); do
        # One capture per poll, judged twice: two captures could straddle the app's exit.
        now="$(screen)"
        if grep -qF -- "$text" <<<"$now"; then return 0; fi
        if grep -qF "CANNPILOT_EXIT=" <<<"$now"; then fail "the app exited while waiting for '$text'"; fi
        sleep 0.5
    done
    fail "timed out after ${limit}s waiting for '$text'"
}
# wait_for_any TEXT1 TEXT2: poll until the screen shows either.
wait_for_any() {
    local start=$SECONDS now
    while (( SECONDS - start < TIMEOUT )); do
        now="$(screen)"
        if grep -qF -- "$1" <<<"$now" || grep -qF -- "$2" <<<"$now"; then return 0; fi
        if grep -qF "CANNPILOT_EXIT=" <<<"$now"; then fail "the app exited while waiting for '$1' or '$2'"; fi
        sleep 0.5
    done
    fail "timed out after ${TIMEOUT}s waiting for '$1' or '$2'"
}
# wait_gone TEXT [TIMEOUT]: poll until the screen no longer shows TEXT (a closed dialog).
wait_gone() {
    local text="$1" limit="${2:-30}" start=$SECONDS
    while (( SECONDS - start < limit )); do
        if ! screen | grep -qF -- "$text"; then return 0; fi
        sleep 0.3
    done
    fail "'$text' still on the screen after ${limit}s"
}
expect() { screen | grep -qF -- "$1" || fail "expected '$1' on the screen ($2)"; }
keys() { tmux send-keys -t "$TMUX_SESSION" "$@"; sleep 0.4; }
# selected: the id of the board's selected row, as the code pane's title names it
selected() { screen | grep -oE '(code · |→ )r[0-9]+-[a-z0-9]+' | head -1 | grep -oE 'r[0-9]+-[a-z0-9]+$'; }
# wait_selected ID [TIMEOUT]: poll until the selected row is ID.
wait_selected() {
    local id="$1" limit="${2:-30}" start=$SECONDS
    while (( SECONDS - start < limit )); do
        [[ "$(selected)" == "$id" ]] && return 0
        sleep 0.3
    done
    fail "the selection is '$(selected)', not '$id', after ${limit}s"
}
# wait_moved FROM [TIMEOUT]: poll until the selection is a row other than FROM. A key sent while an
# escape sequence (Home, End) is still being read can overtake it on a loaded machine, so the next
# key waits for the move to show.
wait_moved() {
    local from="$1" limit="${2:-30}" start=$SECONDS now
    while (( SECONDS - start < limit )); do
        now="$(selected)"
        if [[ -n "$now" && "$now" != "$from" ]]; then return 0; fi
        sleep 0.3
    done
    fail "the selection did not move from '$from' within ${limit}s"
}

command -v tmux >/dev/null || { say "tmux is not installed"; exit 77; }
[[ -x "$CANNPILOT" ]] || { say "no console script at $CANNPILOT"; exit 2; }

say "launching $CANNPILOT in tmux ($WIDTH x $HEIGHT), store $CANNPILOT_STORE"
APP_ENV="CANNPILOT_STORE='$CANNPILOT_STORE' CANNPILOT_CONFIG_DIR='$CANNPILOT_CONFIG_DIR'"
APP_ENV+=" CANNPILOT_CACHE_DIR='$CANNPILOT_CACHE_DIR' CANNPILOT_DATA_DIR='$CANNPILOT_DATA_DIR'"
APP_ENV+=" CANNPILOT_STATE_DIR='$CANNPILOT_STATE_DIR' TERM=xterm-256color"
APP="'$CANNPILOT'"
if [[ "${CANNPILOT_TUI_FAKE:-}" == 1 ]]; then
    APP_ENV+=" PYTHONPATH='$ROOT'"
    APP="'$ROOT/.venv/bin/python' -m tests.tui_tmux.fake_app"
fi
tmux -f /dev/null new-session -d -s "$TMUX_SESSION" -x "$WIDTH" -y "$HEIGHT" \
    "sleep 0.5; cd '$TMP' && env $APP_ENV $APP; echo CANNPILOT_EXIT=\$?; sleep 3600"
# keep the size whatever client (none) is attached; the app starts after the resize
tmux set-option -t "$TMUX_SESSION" window-size manual
tmux resize-window -t "$TMUX_SESSION" -x "$WIDTH" -y "$HEIGHT"
SIZE="$(tmux display-message -p -t "$TMUX_SESSION" '#{window_width}x#{window_height}')"
[[ "$SIZE" == "${WIDTH}x${HEIGHT}" ]] || fail "tmux window is $SIZE, expected ${WIDTH}x${HEIGHT}"

# 1. first screen, then round 1 runs and its review opens
wait_for "leaderboard (times on sim are estimates)" 60
snap first-paint
wait_for "review · round 1"
wait_for "Round 1 finished"
snap review-round-1
expect "µs est." "times are labelled as estimates"
expect "Best so far:" "the review names the best kernel"

# 2. back to the board: pin the top row, veto the last, steer
sleep 1
keys Escape
wait_gone "review · round 1"
wait_for "sorted by rank" 30
keys Home
TOP="$(screen | grep -E '^│ 1 ' | head -1 | awk '{print $3}')"
[[ -n "$TOP" ]] || fail "could not read the top row"
wait_selected "$TOP"
keys p
wait_for "next decision: pin " 10
PINNED="$(screen | grep -oE 'next decision: pin r[0-9]+-[a-z0-9]+' | head -1 | awk '{print $4}')"
[[ "$PINNED" == "$TOP" ]] || fail "pinned '$PINNED', expected the top row '$TOP'"
wait_for "to pin" 10
keys End
wait_moved "$TOP"
keys x
wait_for "veto r" 10
VETOED="$(screen | grep -oE '; veto r[0-9]+-[a-z0-9]+' | head -1 | awk '{print $3}')"
[[ -n "$VETOED" ]] || fail "could not read the vetoed id"
[[ "$VETOED" != "$PINNED" ]] || fail "pinned and vetoed the same row ($PINNED)"
wait_for "to veto" 10
keys s
wait_for "Steer the next round" 10
tmux send-keys -t "$TMUX_SESSION" -l "$STEER_TEXT"
sleep 0.3
keys Enter
wait_for "steer \"keep double buffering" 10
snap decision-drafted
expect "next decision: pin $PINNED; veto $VETOED" "the status bar shows the pending decision"
say "pinned $PINNED, vetoed $VETOED, steered"

# 3. continue; round 2 runs and finishes. Then the engine asks again (the review of round 2), or ends
# the session when round 2 found nothing better than round 1 either (its stagnation rule): which one
# depends on the cost model's figures, not on the TUI
keys n
wait_for_any "review · round 2" "round 2/3 │ finished"
if screen | grep -qF "review · round 2"; then
    wait_for "Round 2 finished"
    snap review-round-2
    sleep 1
    keys Escape
    wait_gone "review · round 2"
else
    say "round 2 found no better kernel: the session ended (stagnation), no review"
fi
wait_for "sorted by rank" 30
wait_for "📌 pinned" 10
expect "✗ vetoed" "the vetoed marker is shown in words"
snap board-round-2

# 4. quit
keys q
wait_for "CANNPILOT_EXIT=0" 60
snap exited

# 5. the store holds the session, its two rounds and the decision exactly as entered
SHOW="$TMP/show.json"
NAME="$("$CANNPILOT" sessions ls --json | "$ROOT/.venv/bin/python" -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["name"] if isinstance(d, list) else d["sessions"][0]["name"])')"
"$CANNPILOT" sessions show "$NAME" --json >"$SHOW"
"$ROOT/.venv/bin/python" - "$SHOW" "$PINNED" "$VETOED" "$STEER_TEXT" <<'PY' || fail "the session store does not hold what was entered"
import json, sys
doc = json.load(open(sys.argv[1]))
pinned, vetoed, steer = sys.argv[2:5]
r1 = [d for d in doc["decisions"] if d["round"] == 1]
kinds = {(d["kind"], d.get("candidate_id"), d.get("text") or "") for d in r1}
assert ("pin", pinned, "") in kinds, r1
assert ("veto", vetoed, "") in kinds, r1
assert ("steer", None, steer) in kinds, r1
assert ("continue", None, "") in kinds, r1
rounds = [r["round"] for r in doc["rounds"]]
assert 1 in rounds and 2 in rounds, rounds
cands = {c["id"]: c for c in doc["candidates"]}
assert any(cid.startswith("r2-") for cid in cands), sorted(cands)
assert cands[pinned]["pinned"] and cands[vetoed]["vetoed"], (cands[pinned], cands[vetoed])
print(f"store ok: rounds {rounds}, "
      f"{len(cands)} candidates, decision pins={pinned} vetoes={vetoed}")
PY
say "all checks passed (session $NAME)"

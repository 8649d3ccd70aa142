#!/usr/bin/env bash
# End-to-end test of the Docker deployment (docs/design.md §9), run by CI: the runtime image built for
# real and a short compose campaign run on it.
#
#   engine     a Docker engine answers: installs Debian's docker.io (+ docker-compose) and starts
#              dockerd when they are missing, as on a bare machine
#   image      docker/build.sh: the base image (built from Debian's packages when no registry
#              answers), then the runtime image; layers the engine already has are reused
#   up         a fresh compose project: generate fills a pool, 2 fuzz replicas, report
#   pool       generate exited 0
#   campaigns  each replica's campaign.db has snapshots and executions
#   uid        every process of the fuzz and report containers runs as uid 1000
#   healthy    the health check of every running container turns healthy
#   crash      once replica 1 has found corpus entries of its own, SIGKILL of its campaign process
#              (as an OOM kill): the engine restarts the container (restart: on-failure) and the
#              campaign resumes
#   kill       the same for replica 2 with `docker kill`: the engine leaves a killed container
#              stopped (a manual stop); `compose up -d` starts it again and the campaign resumes
#   finish     both campaigns end with status 0 within their budget (total across restarts)
#   results    snapshots and executions in each campaign.db; no corpus entry or finding recorded
#              before a kill is lost, and their files exist
#   report     the report's HTML exists, rebuilt after the campaigns ended, covering both trials
#   down-up    `compose down` then `up`: each replica resumes its campaign from the volumes
# Then it removes every container, network and volume it made, and stops the dockerd it started
# (the image stays, so the next run reuses its layers; earlier, untagged builds of it are pruned).
# The last line says which step failed, or that all passed.
#
# Usage: scripts/docker_e2e.sh      (root, or sudo for apt-get; 2 cores: ~13 min cold, ~5 min cached)
# Environment: SEEDZER_E2E_MINUTES (2), SEEDZER_E2E_POOL_SIZE (6), SEEDZER_E2E_PROJECT (seedzer-e2e),
#              DOCKER (the client), PYTHON_IMAGE / TORCH_INDEX_URL (passed to docker/build.sh).
set -uo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=docker/engine.sh
source docker/engine.sh

MINUTES="${SEEDZER_E2E_MINUTES:-2}"
POOL_SIZE="${SEEDZER_E2E_POOL_SIZE:-6}"
PROJECT="${SEEDZER_E2E_PROJECT:-seedzer-e2e}"
REPORT_PERIOD=15
STEPS=(engine image up pool campaigns uid healthy crash kill finish results report down-up)
# The compose file's variables, for this test's campaign.
export SEEDZER_CAMPAIGN=e2e SEEDZER_HEURISTIC=basic SEEDZER_MINUTES="$MINUTES" SEEDZER_JOBS=1 \
    SEEDZER_POOL_SIZE="$POOL_SIZE" SEEDZER_POOL_SEED=0 SEEDZER_REPORT_PERIOD="$REPORT_PERIOD"
RESULTS="experiments/results/$SEEDZER_CAMPAIGN/$SEEDZER_HEURISTIC"
REPORT="experiments/reports/$SEEDZER_CAMPAIGN/report.html"

STATE="$(mktemp -d "${TMPDIR:-/tmp}/seedzer-e2e.XXXXXX")"
step_no=0
step_name=""
step_start=$SECONDS
project_up=0
IMAGE=""

say() { printf '== docker_e2e: %s\n' "$*"; }

step() {
    step_no=$((step_no + 1))
    step_name="$1"
    step_start=$SECONDS
    say "step $step_no/${#STEPS[@]} $step_name: $2"
}

ok() { say "step $step_no/${#STEPS[@]} $step_name: ok, $* ($((SECONDS - step_start)) s)"; }

compose() { "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml "$@"; }

teardown() {
    trap - EXIT INT TERM
    if [[ $project_up -eq 1 ]]; then
        compose down -v --remove-orphans -t 10 >"$STATE/down.log" 2>&1 \
            || say "teardown: compose down failed: $(tail -n 1 "$STATE/down.log")"
    fi
    if [[ -n "${DOCKER:-}" ]]; then
        # Earlier builds of the image, untagged by this one: they would pile up run after run.
        "$DOCKER" image prune -f --filter "label=org.opencontainers.image.title=seedzer" >/dev/null 2>&1 || true
    fi
    engine_stop
    rm -rf -- "$STATE"
}

fail() {
    # Evidence first, then the one line that names the step.
    if [[ $project_up -eq 1 ]]; then
        say "logs of the compose project (last 15 lines of each container):"
        local c
        for c in $(containers ""); do
            echo "--- $c ($("$DOCKER" inspect -f '{{.State.Status}} exit={{.State.ExitCode}} restarts={{.RestartCount}}' "$c" 2>/dev/null))"
            "$DOCKER" logs --tail 15 "$c" 2>&1 | sed 's/^/    /'
        done
    fi
    teardown
    echo "docker_e2e: FAILED at step $step_no/${#STEPS[@]} ($step_name): $*"
    exit 1
}

trap 'fail "interrupted"' INT TERM
trap 'teardown' EXIT

# Containers of the project (all states), of one service or of all ("").
containers() {
    local filter=(--filter "label=com.docker.compose.project=$PROJECT")
    [[ -n "$1" ]] && filter+=(--filter "label=com.docker.compose.service=$1")
    "$DOCKER" ps -a -q "${filter[@]}"
}

state() { "$DOCKER" inspect -f "$2" "$1" 2>/dev/null; }

# The replica number a fuzz container's entrypoint took last (it logs "entrypoint: replica N").
replica_of() { "$DOCKER" logs "$1" 2>&1 | sed -n 's/^entrypoint: replica \([0-9]*\)$/\1/p' | tail -n 1; }

container_of_replica() {
    local c
    for c in $(containers fuzz); do
        [[ "$(replica_of "$c")" == "$1" ]] && { echo "$c"; return 0; }
    done
    return 1
}

resumes_of() { "$DOCKER" logs "$1" 2>&1 | grep -c 'campaign.db exists: resuming it'; }

# wait_for SECONDS WHAT COMMAND...: polls every 3 s; fails the step with WHAT on timeout.
wait_for() {
    local limit="$1" what="$2" deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        ((SECONDS < deadline)) || fail "$what (waited $limit s)"
        sleep 3
    done
}

# The campaigns as campaign.db records them, as JSON on stdout: per trial, snapshots, executions,
# corpus ids, finding signatures and the recorded files that are missing. Read in a container of
# the image (uid 1000, like the writers) from the experiments volume.
db_state() {
    "$DOCKER" run --rm -i --network none --entrypoint python -v "$EXPERIMENTS_VOLUME:/data/experiments" \
        "$IMAGE" - "$RESULTS" <<'EOF'
import json, sqlite3, sys
from pathlib import Path

out = {}
for trial in sorted(Path(sys.argv[1]).glob("trial-*")):
    db = trial / "campaign.db"
    if not db.exists():
        continue
    conn = sqlite3.connect(db, timeout=60)
    snapshots, max_execs = conn.execute("SELECT COUNT(*), COALESCE(MAX(execs), 0) FROM snapshots").fetchone()
    corpus = dict(conn.execute("SELECT id, path FROM corpus"))
    findings = dict(conn.execute("SELECT signature, dir FROM findings"))
    out[trial.name] = {
        "snapshots": snapshots,
        "execs": max(max_execs, conn.execute("SELECT COALESCE(SUM(count), 0) FROM exec_summary").fetchone()[0]),
        "corpus": sorted(corpus),
        # entries the fuzzer found (a mutant's parent is recorded; the pool's seeds have none)
        "found": conn.execute("SELECT COUNT(*) FROM corpus WHERE parent IS NOT NULL").fetchone()[0],
        "findings": sorted(findings),
        "missing_files": sorted([p for p in corpus.values() if not (trial / p).exists()]
                                + [d for d in findings.values() if d and not (trial / d).exists()
                                   and not Path(d).exists()]),
    }
    conn.close()
print(json.dumps(out))
EOF
}

# py EXPRESSION FILE...: evaluates a Python expression over the JSON files (j[0], j[1], ...),
# prints its value; exit status 1 when it is falsy. s(trial) summarises one trial of db_state.
py() {
    python3 - "$@" <<'EOF'
import json, sys
j = [json.load(open(f)) for f in sys.argv[2:]]
def s(t):
    return "%d snapshots, %d execs, %d corpus entries (%d found by fuzzing), %d findings" % (
        t["snapshots"], t["execs"], len(t["corpus"]), t["found"], len(t["findings"]))
def all_trials(d):
    return "; ".join("%s: %s" % (k, s(v)) for k, v in sorted(d.items()))
value = eval(sys.argv[1])
print(value if not isinstance(value, bool) else "")
sys.exit(0 if value else 1)
EOF
}

campaigns_running() {
    db_state >"$STATE/db.json" 2>/dev/null || return 1
    py 'all(j[0].get(f"trial-{n}", {}).get("snapshots", 0) > 0 and j[0][f"trial-{n}"]["execs"] > 0 for n in (1, 2))' \
        "$STATE/db.json" >/dev/null
}

has_found() {
    db_state >"$STATE/db.json" 2>/dev/null || return 1
    py "j[0].get('trial-$1', {}).get('found', 0) > 0" "$STATE/db.json" >/dev/null
}

all_healthy() {
    local c
    for c in $(containers fuzz) $(containers report); do
        [[ "$(state "$c" '{{.State.Running}}')" == true ]] || continue
        [[ "$(state "$c" '{{if .State.Health}}{{.State.Health.Status}}{{end}}')" == healthy ]] || return 1
    done
}

restarted() { [[ "$(state "$1" '{{.RestartCount}}')" -ge 1 && "$(state "$1" '{{.State.Running}}')" == true ]]; }
resumed_since() { [[ "$(resumes_of "$1")" -gt "$2" ]]; }

fuzz_done() {
    local c
    for c in $(containers fuzz); do
        [[ "$(state "$c" '{{.State.Status}}')" == exited ]] || return 1
    done
}

report_fresh() {
    "$DOCKER" run --rm --network none --entrypoint python -v "$EXPERIMENTS_VOLUME:/data/experiments" "$IMAGE" \
        -c "import os, sys; p = '$REPORT'; sys.exit(0 if os.path.exists(p) and os.path.getmtime(p) > $1 else 1)" \
        2>/dev/null
}

total_start=$SECONDS

# ---------------------------------------------------------------------------------------------------
step engine "a Docker engine, a BuildKit client and a compose"
engine_pick_docker 2>/dev/null || true
engine_ensure "$STATE" || fail "no engine (see the line above)"
engine_pick_docker || fail "no docker client that builds with BuildKit"
if ! engine_pick_compose 2>/dev/null; then
    _engine_apt_install docker-compose || fail "cannot install docker-compose"
    engine_pick_compose || fail "no compose"
fi
ok "$("$DOCKER" version --format 'client {{.Client.Version}}, engine {{.Server.Version}}'), $("${COMPOSE[@]}" version --short 2>/dev/null | head -n 1 || echo compose)${ENGINE_STARTED_PID:+, dockerd started by this test (pid $ENGINE_STARTED_PID)}"
export DOCKER

step image "docker/build.sh (runtime image)"
if ! BUILD_PROGRESS=plain docker/build.sh >"$STATE/build.out" 2>"$STATE/build.log"; then
    grep -E '^(engine|base-image|build): ' "$STATE/build.log"
    tail -n 25 "$STATE/build.log"
    fail "the image does not build (log above)"
fi
grep -E '^(engine|base-image|build): ' "$STATE/build.log" | sed 's/^/    /'
IMAGE="$(tail -n 1 "$STATE/build.out")"
cached="$(grep -c '^#[0-9]* CACHED' "$STATE/build.log")"
ok "$IMAGE, $(( $("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE") / 1000000 )) MB, $cached steps from cache"

step up "compose up: generate, 2 fuzz replicas, report (SEEDZER_MINUTES=$MINUTES)"
project_up=1
compose down -v --remove-orphans -t 10 >/dev/null 2>&1  # what an interrupted earlier run left
if ! timeout 900 "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml up -d --no-build >"$STATE/up.log" 2>&1; then
    tail -n 20 "$STATE/up.log"
    fail "compose up failed"
fi
EXPERIMENTS_VOLUME="$("$DOCKER" volume ls -q --filter "label=com.docker.compose.project=$PROJECT" \
    --filter "label=com.docker.compose.volume=experiments")"
[[ -n "$EXPERIMENTS_VOLUME" ]] || fail "no experiments volume in project $PROJECT"
fuzz_count="$(containers fuzz | wc -l)"
[[ "$fuzz_count" -eq 2 ]] || fail "$fuzz_count fuzz containers, not 2"
ok "$(containers "" | wc -l) containers, volume $EXPERIMENTS_VOLUME"

step pool "generate fills seedpools/$SEEDZER_HEURISTIC ($POOL_SIZE models)"
generate="$(containers generate)"
wait_for 600 "generate did not finish" test "$(state "$generate" '{{.State.Status}}')" == exited
code="$(state "$generate" '{{.State.ExitCode}}')"
[[ "$code" -eq 0 ]] || fail "generate exited with status $code: $("$DOCKER" logs --tail 1 "$generate" 2>&1)"
ok "$("$DOCKER" logs "$generate" 2>&1 | grep -m 1 -o 'models in pool.*' | tr -s ' │' ' ')"

step campaigns "each replica's campaign.db has snapshots and executions"
wait_for 240 "trial-1 and trial-2 do not both record snapshots with executions" campaigns_running
ok "$(py 'all_trials(j[0])' "$STATE/db.json")"

step uid "every process of the fuzz and report containers runs as uid 1000"
for c in $(containers fuzz) $(containers report); do
    "$DOCKER" top "$c" -eo uid,pid,args >"$STATE/top" || fail "docker top $c failed"
    others="$(awk 'NR > 1 && $1 != 1000' "$STATE/top")"
    [[ -z "$others" ]] || fail "$(state "$c" '{{.Name}}'): not uid 1000: $others"
    [[ "$(awk 'NR > 1' "$STATE/top" | wc -l)" -ge 2 ]] || fail "$(state "$c" '{{.Name}}'): no processes"
done
ok "$(for c in $(containers fuzz) $(containers report); do printf '%s: %s processes; ' "$(state "$c" '{{.Name}}' | tr -d /)" "$("$DOCKER" top "$c" -eo uid,pid | awk 'NR > 1' | wc -l)"; done)"

step healthy "the health check of every running container turns healthy"
wait_for 150 "not all running containers are healthy" all_healthy
ok "$(for c in $(containers fuzz) $(containers report); do printf '%s %s; ' "$(state "$c" '{{.Name}}' | tr -d /)" "$(state "$c" '{{.State.Health.Status}}')"; done)"

step crash "SIGKILL of replica 1's campaign process: the engine restarts it, the campaign resumes"
c1="$(container_of_replica 1)" || fail "no container holds replica 1"
wait_for 120 "trial-1 found no corpus entry of its own to lose" has_found 1
cp "$STATE/db.json" "$STATE/before-crash.json"
resumes="$(resumes_of "$c1")"
init_pid="$(state "$c1" '{{.State.Pid}}')"
campaign_pid="$(ps -o pid= --ppid "$init_pid" | head -n 1 | tr -d ' ')"
[[ -n "$campaign_pid" ]] || fail "no campaign process under tini ($init_pid) in $c1"
kill -KILL "$campaign_pid" || fail "cannot kill $campaign_pid"
wait_for 60 "the engine did not restart $(state "$c1" '{{.Name}}')" restarted "$c1"
wait_for 60 "the restarted replica did not resume its campaign" resumed_since "$c1" "$resumes"
[[ "$(replica_of "$c1")" == 1 ]] || fail "the restarted container took replica $(replica_of "$c1"), not 1"
ok "before the kill $(py 's(j[0]["trial-1"])' "$STATE/before-crash.json"); restarted $(state "$c1" '{{.RestartCount}}') time(s), resumed trial-1"

step kill "docker kill of replica 2: compose up -d starts it again, the campaign resumes"
c2="$(container_of_replica 2)" || fail "no container holds replica 2"
wait_for 120 "trial-2 found no corpus entry of its own to lose" has_found 2
cp "$STATE/db.json" "$STATE/before-kill.json"
resumes="$(resumes_of "$c2")"
"$DOCKER" kill "$c2" >/dev/null || fail "docker kill $c2 failed"
sleep 5
if [[ "$(state "$c2" '{{.State.Running}}')" == true ]]; then
    by="the engine (restart policy)"
else
    by="compose up -d (the engine restarts no killed container)"
    timeout 600 "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml up -d --no-build >"$STATE/up2.log" 2>&1 \
        || fail "compose up -d after the kill failed: $(tail -n 1 "$STATE/up2.log")"
fi
wait_for 120 "the killed replica did not resume its campaign" resumed_since "$c2" "$resumes"
[[ "$(replica_of "$c2")" == 2 ]] || fail "the restarted container took replica $(replica_of "$c2"), not 2"
[[ "$(containers fuzz | wc -l)" -eq 2 ]] || fail "compose up -d changed the number of fuzz containers"
ok "before the kill $(py 's(j[0]["trial-2"])' "$STATE/before-kill.json"); restarted by $by, resumed trial-2"

step finish "both campaigns end with status 0 within their $MINUTES-minute budget"
wait_for $((MINUTES * 60 + 300)) "the campaigns did not end" fuzz_done
finished_at="$(date +%s)"
for c in $(containers fuzz); do
    code="$(state "$c" '{{.State.ExitCode}}')"
    [[ "$code" -eq 0 ]] || fail "$(state "$c" '{{.Name}}') exited with status $code: $("$DOCKER" logs --tail 1 "$c" 2>&1)"
done
ok "$(for c in $(containers fuzz); do printf '%s: replica %s, status 0, %s restart(s); ' "$(state "$c" '{{.Name}}' | tr -d /)" "$(replica_of "$c")" "$(state "$c" '{{.RestartCount}}')"; done)"

step results "snapshots and executions recorded; nothing recorded before a kill is lost"
db_state >"$STATE/after.json" || fail "cannot read the campaign databases"
py 'all(j[0].get(t, {}).get("snapshots", 0) > 0 and j[0][t]["execs"] > 0 for t in ("trial-1", "trial-2"))' \
    "$STATE/after.json" >/dev/null || fail "a campaign.db lacks snapshots or executions: $(head -c 300 "$STATE/after.json")"
for pair in "trial-1 before-crash" "trial-2 before-kill"; do
    read -r trial before <<<"$pair"
    lost="$(py "sorted((set(j[0]['$trial']['corpus']) - set(j[1]['$trial']['corpus'])) | (set(j[0]['$trial']['findings']) - set(j[1]['$trial']['findings']))) or 'none'" \
        "$STATE/$before.json" "$STATE/after.json")"
    [[ "$lost" == none ]] || fail "$trial lost what it had recorded before its kill: $lost"
done
absent="$(py 'sorted(p for v in j[0].values() for p in v["missing_files"]) or "none"' "$STATE/after.json")"
[[ "$absent" == none ]] || fail "files recorded in campaign.db are missing: $absent"
ok "$(py 'all_trials(j[0])' "$STATE/after.json")"

step report "the report's HTML, rebuilt after the campaigns ended, covers both trials"
wait_for $((REPORT_PERIOD * 4 + 120)) "$REPORT was not rebuilt after the campaigns ended" report_fresh "$finished_at"
"$DOCKER" run --rm --network none --entrypoint cat -v "$EXPERIMENTS_VOLUME:/data/experiments" "$IMAGE" "$REPORT" \
    >"$STATE/report.html" || fail "cannot read $REPORT"
grep -qi '<html' "$STATE/report.html" || fail "$REPORT is not HTML"
grep -q "$SEEDZER_HEURISTIC" "$STATE/report.html" || fail "$REPORT does not name the heuristic $SEEDZER_HEURISTIC"
rebuilt="$("$DOCKER" logs "$(containers report)" 2>&1 | grep '^report: ' | tail -n 1)"
[[ "$rebuilt" == *"(2 trials"* ]] || fail "the report's last rebuild does not cover 2 trials: $rebuilt"
ok "$(wc -c <"$STATE/report.html") bytes; $rebuilt"

step down-up "compose down, then up: each replica resumes its campaign from the volumes"
compose down -t 30 >"$STATE/down1.log" 2>&1 || fail "compose down failed: $(tail -n 1 "$STATE/down1.log")"
[[ -z "$(containers "")" ]] || fail "compose down left containers"
timeout 900 "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.yml up -d --no-build >"$STATE/up3.log" 2>&1 \
    || fail "compose up after down failed: $(tail -n 1 "$STATE/up3.log")"
wait_for 300 "the replicas did not end after resuming" fuzz_done
for c in $(containers fuzz); do
    [[ "$(resumes_of "$c")" -eq 1 ]] || fail "$(state "$c" '{{.Name}}') did not resume its campaign"
    code="$(state "$c" '{{.State.ExitCode}}')"
    [[ "$code" -eq 0 ]] || fail "$(state "$c" '{{.Name}}') exited with status $code: $("$DOCKER" logs --tail 1 "$c" 2>&1)"
done
db_state >"$STATE/again.json" || fail "cannot read the campaign databases"
lost="$(py "sorted(t for t in ('trial-1', 'trial-2') if not set(j[0][t]['corpus']) <= set(j[1].get(t, {}).get('corpus', []))) or 'none'" \
    "$STATE/after.json" "$STATE/again.json")"
[[ "$lost" == none ]] || fail "corpus entries lost across down and up in: $lost"
ok "replicas $(for c in $(containers fuzz); do printf '%s ' "$(replica_of "$c")"; done)resumed their campaigns with the budget spent and ended with status 0; $(py 'all_trials(j[0])' "$STATE/again.json")"

stopped="${ENGINE_STARTED_PID:+ and stopped the dockerd it had started}"
teardown
say "all ${#STEPS[@]} steps passed in $((SECONDS - total_start)) s; removed the project's containers, network and volumes$stopped"

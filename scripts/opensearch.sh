#!/usr/bin/env bash
# A throwaway single-node OpenSearch 2.19.1 with the k-NN plugin, for the test suite and benchmarks.
#
#   scripts/opensearch.sh up     start a node (or reuse the running one); prints OPENSEARCH_URL=...
#   scripts/opensearch.sh down   stop it and delete its data
#   scripts/opensearch.sh url    print the running node's URL (exit 1 when none runs)
#   scripts/opensearch.sh run -- CMD...  CMD with OPENSEARCH_URL set: the one already set, or a
#                                node started for it and stopped after it (whatever CMD's status)
#   scripts/opensearch.sh fetch  only fetch and check the artifacts
#
# Everything comes from Maven Central through Maven, pinned by version and by SHA-512 (the list
# below; a mismatch stops the script), and is cached outside the work tree in
# ${XDG_CACHE_HOME:-~/.cache}/agent-memory/opensearch. Maven Central's integration-test
# distribution carries only the HTTP transport, so the three modules the store needs are put
# together from their published jars: lang-painless (the update scripts; k-NN extends it),
# analysis-common (the stemmer, stop and asciifolding filters of the text analyzers) and reindex
# (reindex, update- and delete-by-query). Maven Central's k-NN zip carries no native libraries, so
# only the lucene engine runs on this node (docs/opensearch.md).
#
# The node binds 127.0.0.1 on a free port, security off (the distribution has no security
# plugin), a 512 MiB heap, its data in a temporary directory. OpenSearch refuses to run as root:
# under root it runs as `nobody`. Needs Java 11+ (JAVA_HOME or `java` on PATH) and `mvn`.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION=2.19.1
CACHE="${AGENT_MEMORY_OPENSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-memory/opensearch}"
STATE="$ROOT/.build/opensearch.env"
HEAP="${AGENT_MEMORY_OPENSEARCH_HEAP:-512m}"
START_TIMEOUT_S="${AGENT_MEMORY_OPENSEARCH_START_TIMEOUT_S:-240}"

# groupId:artifactId:version:type  sha512  module it belongs to ("-" for the distribution/plugin)
ARTIFACTS="
org.opensearch.distribution.integ-test-zip:opensearch:$VERSION:zip 0bed69daad3c80e1302a0dba083f04f5accbb94ba8451052822ec065d24432fe096e329d6971758a8a021025b0302ee5b27eb5d89506853d8be736305f407651 -
org.opensearch.plugin:opensearch-knn:$VERSION.0:zip b773727c4c41d08f3e3af4726cde420b90749c55a5cc82ca5fd42a5b58f3edb002f2210b8653a597b5121d4034b428857df7bd82627b44946da7d2ad67111b28 -
org.opensearch.plugin:lang-painless:$VERSION:jar ba2fe248236b51b7ffc8a8eb9999b893161f2708215fd65d8363dc2054d6c67ec25b6c1aca13f1d580789e14ecc10a714b69ed1e2e152c61ce3c22c47aee4ec2 lang-painless
org.opensearch.plugin:opensearch-scripting-painless-spi:$VERSION:jar 964cb4b3b8ce94a42bc7e4e699d01db7b34c68966c8fc2d5014461c2b5e98a22e53b04173f8b33e2f12cd3ec9e571f033341ea72039017551de70641442624b1 lang-painless
org.antlr:antlr4-runtime:4.13.1:jar 63eb51bfcee49c52848d8b7c3c46d8b4d367d85fb3c3db7175eaacba94e4d0c227b78e5955a0e86e575e1c6206fc2a43e5fa96fb04ad7c16e24ec94015cfc18b lang-painless
org.ow2.asm:asm:9.7:jar ada37fcc95884a4d2cbc64495f5f67556c847e7724e26ccfbb15cc42a476436fa54b5d4fd4d9ed340241d848999d415e1cff07045d9e97d451c16aeed4911045 lang-painless
org.ow2.asm:asm-analysis:9.7:jar 69c2a9f73262b0fe5c1758973b5406dc0639b0e1d9a82863d5bc2d664395b737e45f50789c6f7ba3c8915d7ec79858e197032066d6b8386e35d6aed6cd95a8f2 lang-painless
org.ow2.asm:asm-commons:9.7:jar 64544d7515aa4582ebf40e9a5ec32cbcee3ef0e3e15448bd56e6adb583d4ff764a34bba866816e4415298da939b029384a6ccf887c70b5fe98ac23589e626f79 lang-painless
org.ow2.asm:asm-tree:9.7:jar 60c548f80af02ea8da5866104921ca818a8de846504faebac5cf016becba6b277a33bf594a7fd783443856310864b2ffc99aa11cd6f4e439c086734923ef823b lang-painless
org.ow2.asm:asm-util:9.7:jar 7056f5905a27a8a3bc2e2b9774d1c70378b2441779bdce218f45aa2a549d1f4e2b81d562f20bf9a8d5be96d33e30a8f9e15caeebade6287dde6cc082afb36089 lang-painless
org.opensearch.plugin:analysis-common:$VERSION:jar b7eb67d3eeca0e0ed47eac2753bf2743ca5efee56874459c927c1254546622e6743edd9ed9c4993de6b7769610359db6a690a78c6a3ae60ace0612951ed8f960 analysis-common
org.opensearch.plugin:reindex-client:$VERSION:jar b01095fb1fab1297cf6762749175065c44538635b01a3d14694066d111fb77cc8b5a2df86935e130926e59af425729db10f95d35a9bad5639f2cc90e8fdaf372 reindex
org.opensearch.client:opensearch-rest-client:$VERSION:jar ff753538c0dc907d105f76004f6181d970356c610590682e3a4011d3dfc42942e153dca90138029d69a6806f5356053c9fd7519e5f8d6f20eab97cf1635467d8 reindex
org.opensearch:opensearch-ssl-config:$VERSION:jar 334755b3571da36fc03f1e9a329f1ee65a23047ca0039af6a2cbd8e3642d176cfbf8a6fa2d007fbbdb8d1c4c894143bf35b8b4a1574227c2c1878cf62a479c3c reindex
org.apache.httpcomponents:httpclient:4.5.14:jar a084ef30fb0a2a25397d8fab439fe68f67e294bf53153e2e1355b8df92886d40fe6abe35dc84f014245f7158e92641bcbd98019b4fbbd9e5a0db495b160b4ced reindex
org.apache.httpcomponents:httpcore:4.4.16:jar 168026436a6bcf5e96c0c59606638abbdc30de4b405ae55afde70fdf2895e267a3d48bba6bdadc5a89f38e31da3d9a9dc91e1cab7ea76f5e04322cf1ec63b838 reindex
org.apache.httpcomponents:httpasyncclient:4.1.5:jar 1e33c7fdfa63f377ec4844b7744d2f8ec30dc7867136905ff5a5a6e5f94efa5b8159ba20e81f0048f48430cf63ada7411a3974a418aefa497d2b4fab3501f5ba reindex
org.apache.httpcomponents:httpcore-nio:4.4.16:jar 197cb4f4343a02d39d61db1c19bf10757aeb2078f51c4ace77a72a250b6d03b31fa1fc51f989f43df8c2a0cf8162a36664a8a935f4bbeb860c35770a3abd1899 reindex
commons-codec:commons-codec:1.16.1:jar bd33fd5340757ea0616a8c2a48760cfc9932f93b8e067701f4a122fd59735083468a016d8c0fd65973dd3fa4fc3537855e71a1fae7d14e1777e31ff1c47708ce reindex
commons-logging:commons-logging:1.2:jar ed00dbfabd9ae00efa26dd400983601d076fe36408b7d6520084b447e5d1fa527ce65bd6afdcb58506c3a808323d28e88f26cb99c6f5db9ff64f6525ecdfa557 reindex
"

# module  plugin class  the plugin it extends
MODULES="
lang-painless org.opensearch.painless.PainlessPlugin -
analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin lang-painless
reindex org.opensearch.index.reindex.ReindexPlugin -
"

log() { echo "opensearch: $*" >&2; }

file_of() { # g:a:v:t -> the file name Maven copies it to
  local a v t
  IFS=: read -r _ a v t <<<"$1"
  echo "$a-$v.$t"
}

fetch() {
  local downloads="$CACHE/downloads" missing=0 coordinate sha module
  mkdir -p "$downloads"
  while read -r coordinate sha module; do
    [ -n "$coordinate" ] || continue
    [ -f "$downloads/$(file_of "$coordinate")" ] || missing=1
  done <<<"$ARTIFACTS"
  if [ "$missing" = 1 ]; then
    command -v mvn >/dev/null || { log "mvn is not installed (apt-get install maven)"; exit 2; }
    local pom="$downloads/pom.xml"
    {
      echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
      echo '<groupId>local</groupId><artifactId>opensearch-test-node</artifactId><version>1</version>'
      echo '<packaging>pom</packaging><dependencies>'
      while read -r coordinate sha module; do
        [ -n "$coordinate" ] || continue
        IFS=: read -r g a v t <<<"$coordinate"
        echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version><type>$t</type></dependency>"
      done <<<"$ARTIFACTS"
      echo '</dependencies></project>'
    } >"$pom"
    log "fetching OpenSearch $VERSION, k-NN and three modules from Maven Central"
    # --strict-checksums: Maven refuses a file whose published .sha1 does not match
    mvn -q -B --strict-checksums -f "$pom" dependency:copy-dependencies \
      -DexcludeTransitive=true -DoutputDirectory="$downloads" >&2
  fi
  local bad=0 actual
  while read -r coordinate sha module; do
    [ -n "$coordinate" ] || continue
    actual="$(sha512sum "$downloads/$(file_of "$coordinate")" | cut -d' ' -f1)"
    if [ "$actual" != "$sha" ]; then
      log "checksum mismatch for $coordinate: expected $sha, got $actual"
      bad=1
    fi
  done <<<"$ARTIFACTS"
  [ "$bad" = 0 ] || exit 3
}

assemble() { # the installed node, cached: distribution + modules + k-NN
  local home="$CACHE/opensearch-$VERSION" downloads="$CACHE/downloads"
  [ -f "$home/.assembled" ] && return 0
  fetch
  rm -rf "$home" "$home.tmp"
  mkdir -p "$home.tmp"
  python3 -m zipfile -e "$downloads/$(file_of "org.opensearch.distribution.integ-test-zip:opensearch:$VERSION:zip")" "$home.tmp"
  mv "$home.tmp/opensearch-$VERSION" "$home" && rmdir "$home.tmp"
  chmod +x "$home"/bin/*
  mkdir -p "$home/plugins/opensearch-knn"
  python3 -m zipfile -e "$downloads/opensearch-knn-$VERSION.0.zip" "$home/plugins/opensearch-knn"
  local name class extends coordinate sha module
  while read -r name class extends; do
    [ -n "$name" ] || continue
    mkdir -p "$home/modules/$name"
    cat >"$home/modules/$name/plugin-descriptor.properties" <<EOF
description=$name, from its Maven Central jars
version=$VERSION
name=$name
classname=$class
java.version=11
opensearch.version=$VERSION
extended.plugins=$([ "$extends" = - ] || echo "$extends")
has.native.controller=false
EOF
  done <<<"$MODULES"
  # painless compiles scripts into classes: the permissions of its own policy file upstream
  printf 'grant {\n  permission java.lang.RuntimePermission "createClassLoader";\n  permission java.lang.RuntimePermission "getClassLoader";\n};\n' \
    >"$home/modules/lang-painless/plugin-security.policy"
  while read -r coordinate sha module; do
    [ -n "$coordinate" ] && [ "$module" != - ] || continue
    cp "$downloads/$(file_of "$coordinate")" "$home/modules/$module/"
  done <<<"$ARTIFACTS"
  touch "$home/.assembled"
}

java_home() {
  if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME"; return; fi
  command -v java >/dev/null || { log "no Java: install a JDK 11+ or set JAVA_HOME"; exit 2; }
  dirname "$(dirname "$(readlink -f "$(command -v java)")")"
}

running_url() { # the URL of the node this checkout started, when it still answers
  [ -f "$STATE" ] || return 1
  # shellcheck disable=SC1090
  . "$STATE"
  kill -0 "$OPENSEARCH_PID" 2>/dev/null && curl -fsS "$OPENSEARCH_URL" >/dev/null 2>&1 || return 1
  echo "$OPENSEARCH_URL"
}

up() {
  local url
  if url="$(running_url)"; then
    echo "OPENSEARCH_URL=$url"
    return 0
  fi
  assemble
  local run port pid
  run="$(mktemp -d "${TMPDIR:-/tmp}/agent-memory-opensearch.XXXXXX")"
  cp -a "$CACHE/opensearch-$VERSION" "$run/home"
  mkdir -p "$run/data" "$run/logs" "$run/tmp"
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  local as=()
  if [ "$(id -u)" = 0 ]; then # OpenSearch will not run as root
    chown -R nobody:"$(id -gn nobody)" "$run"
    as=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups env HOME="$run")
  fi
  log "starting a node on 127.0.0.1:$port (home $run)"
  # not -d: the launcher execs java, so $! is the node's pid; setsid keeps it out of the caller's
  # process group (a make interrupted later does not take the node down with it)
  setsid "${as[@]}" env OPENSEARCH_JAVA_HOME="$(java_home)" OPENSEARCH_TMPDIR="$run/tmp" \
    OPENSEARCH_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP" \
    "$run/home/bin/opensearch" \
    -Ecluster.name=agent-memory-test -Enode.name=agent-memory-test \
    -Ediscovery.type=single-node -Enetwork.host=127.0.0.1 -Ehttp.port="$port" \
    -Epath.data="$run/data" -Epath.logs="$run/logs" \
    -Ecluster.routing.allocation.disk.threshold_enabled=false \
    -Eaction.auto_create_index=false </dev/null >"$run/stdout.log" 2>&1 &
  pid=$!
  url="http://127.0.0.1:$port"
  local waited=0
  until curl -fsS "$url/_cluster/health?wait_for_status=green&timeout=1s" >/dev/null 2>&1; do
    if [ "$waited" -ge "$START_TIMEOUT_S" ] || ! kill -0 "$pid" 2>/dev/null; then
      log "the node did not come up in ${waited}s; its output:"
      tail -n 40 "$run/stdout.log" >&2 || true
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  mkdir -p "$(dirname "$STATE")"
  printf 'OPENSEARCH_URL=%s\nOPENSEARCH_PID=%s\nOPENSEARCH_RUN=%s\n' "$url" "$pid" "$run" >"$STATE"
  log "up after ${waited}s"
  echo "OPENSEARCH_URL=$url"
}

down() {
  [ -f "$STATE" ] || { log "no node is running"; return 0; }
  # shellcheck disable=SC1090
  . "$STATE"
  if kill -0 "$OPENSEARCH_PID" 2>/dev/null; then
    kill "$OPENSEARCH_PID"
    for _ in $(seq 1 60); do kill -0 "$OPENSEARCH_PID" 2>/dev/null || break; sleep 1; done
    kill -0 "$OPENSEARCH_PID" 2>/dev/null && kill -9 "$OPENSEARCH_PID"
  fi
  case "$OPENSEARCH_RUN" in */agent-memory-opensearch.*) rm -rf "$OPENSEARCH_RUN" ;; esac
  rm -f "$STATE"
  log "stopped"
}

run() { # a command with OPENSEARCH_URL set: the given cluster's, the node `up` left running, or a
  # node started for it and stopped after it
  if [ -z "${OPENSEARCH_URL:-}" ] && OPENSEARCH_URL="$(running_url)"; then
    export OPENSEARCH_URL
  fi
  if [ -n "${OPENSEARCH_URL:-}" ]; then
    "$@"
    return
  fi
  unset OPENSEARCH_URL
  local line
  line="$(up)"
  export "${line?}"
  trap 'down; exit 130' INT TERM
  local status=0
  "$@" || status=$?
  down
  return "$status"
}

case "${1:-}" in
fetch) fetch ;;
up) up ;;
run)
  shift
  [ "${1:-}" != -- ] || shift
  run "$@"
  ;;
down) down ;;
url) running_url ;;
*)
  echo "usage: $0 up|down|url|fetch|run -- CMD..." >&2
  exit 2
  ;;
esac

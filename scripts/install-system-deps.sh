#!/usr/bin/env bash
# Install the Debian packages the test suite drives: chromium (browser tests, through Playwright),
# docker-registry (registry tests on 127.0.0.1) and nodejs (the workflows' github-script steps). Idempotent: a package whose binary is already
# on PATH is left alone, and when nothing is missing apt-get is not called at all.
#
# Runs as root directly, through sudo otherwise. Never prompts (DEBIAN_FRONTEND=noninteractive,
# apt-get -y). SKIP_SYSTEM_DEPS=1 skips the install (the tests that need a package then skip,
# and under CI=true such a skip fails the run).
set -euo pipefail

# Debian package name : the binary it provides.
REQUIRED=("chromium:chromium" "docker-registry:docker-registry" "nodejs:node")

say() { echo "install-system-deps: $*"; }

missing=()
for pair in "${REQUIRED[@]}"; do
    package=${pair%%:*}
    binary=${pair#*:}
    if found=$(command -v "$binary"); then
        say "$package is installed ($found)"
    else
        missing+=("$package")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    say "nothing to install"
    exit 0
fi

if [ "${SKIP_SYSTEM_DEPS:-}" = "1" ]; then
    say "SKIP_SYSTEM_DEPS=1: not installing ${missing[*]}; tests that need them will skip" >&2
    exit 0
fi

apt() {
    if [ "$(id -u)" -eq 0 ]; then
        env DEBIAN_FRONTEND=noninteractive apt-get "$@"
    elif command -v sudo >/dev/null; then
        sudo env DEBIAN_FRONTEND=noninteractive apt-get "$@"
    else
        say "need root or sudo to install ${missing[*]}; install them by hand or set SKIP_SYSTEM_DEPS=1" >&2
        exit 1
    fi
}

say "installing ${missing[*]}"
apt update
apt install -y --no-install-recommends "${missing[@]}"

for pair in "${REQUIRED[@]}"; do
    binary=${pair#*:}
    if ! command -v "$binary" >/dev/null; then
        say "apt-get finished but '$binary' is still not on PATH (package ${pair%%:*})" >&2
        exit 1
    fi
done
say "done"

#!/usr/bin/env bash
# Builds loopguard as a static-pie executable (glibc linked statically) into
# target/static/release/loopguard. The hook is a fresh process on every tool call; without the
# dynamic loader's work it starts about 0.3 ms sooner on these machines. The hook calls no NSS
# functions (it reads HOME from the environment). One command does: `loopguard breaker flush`
# resolves the webhook's host name with getaddrinfo, which in a static glibc loads the NSS modules
# of the installed glibc at run time — fine on the machine it was built on (tested: a `localhost`
# webhook delivered), a failed delivery (audited, retried) where the glibc differs; an IP address
# in `webhook_url` needs no lookup.
set -euo pipefail
cd "$(dirname "$0")/.."
# loopguard-console (dashboard, fleet: web server and database client) is a binary of its own so
# that the hook's stays small; it resolves the fleet database's host name like the webhook above.
cargo rustc --release -p loopguard --bin loopguard-console --target-dir target/static -- -C target-feature=+crt-static
cargo rustc --release -p loopguard --bin loopguard --target-dir target/static -- -C target-feature=+crt-static
echo "target/static/release/loopguard"

# SPDX-License-Identifier: MIT
# memfail's container image: Debian 12 with the memfail package (memfail and fake-llm on PATH, the
# cluster scripts at /usr/share/memfail/examples/cluster, the tokenizer rank files). The build
# context is the folder holding the package, so build it with `make docker IMAGE=<name>` (which runs
# `make package` and scripts/build-image) or by hand:
#
#   make package
#   docker build -f Dockerfile -t <registry>/memfail:0.1.0 build/release/package
#   docker push <registry>/memfail:0.1.0
FROM debian:12-slim
COPY memfail_*.deb /tmp/
RUN apt-get update \
 && apt-get install -y --no-install-recommends /tmp/memfail_*.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/memfail_*.deb \
 && memfail --version
WORKDIR /work
CMD ["memfail", "--help"]

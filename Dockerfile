# tributary: build on Debian trixie, run on trixie-slim as a non-root user.
# The build stage mirrors scripts/install-deps (build) and scripts/run; trixie's
# own librdkafka (2.8.0) serves, so nothing is built from source here
# (docs/ARCHITECTURE.md, "librdkafka 2.8").

FROM debian:trixie AS build
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends gcc g++ cmake make pkg-config git ca-certificates \
        librdkafka-dev libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev \
        libsqlite3-dev libpq-dev libssl-dev libavro-dev libprotobuf-dev libprotoc-dev zlib1g-dev \
        libsnappy-dev libzstd-dev libjemalloc-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_TESTS=OFF \
    && cmake --build build -j "$(nproc)" \
    && cmake --install build --prefix /opt/tributary

FROM debian:trixie-slim
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends librdkafka1 libmicrohttpd12t64 libjansson4 libcurl4t64 \
        libsqlite3-0 libpq5 libssl3t64 libavro24 libprotobuf32t64 libprotoc32t64 libjemalloc2 \
        zlib1g libsnappy1v5 libzstd1 \
        ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 tributary \
    && useradd --uid 10001 --gid 10001 --home-dir /var/lib/tributary --create-home \
        --shell /usr/sbin/nologin tributary
# The binary and, in lib/tributary beside its bin/, the Protobuf module it
# loads when a connector first uses Protobuf (registry/protobuf/tb_protobuf_module.h).
COPY --from=build /opt/tributary/bin/tributary /usr/local/bin/tributary
COPY --from=build /opt/tributary/lib/tributary /usr/local/lib/tributary
COPY scripts/healthcheck /usr/local/bin/tributary-healthcheck
# numeric, so that Kubernetes' runAsNonRoot can check it (deploy/helm)
USER 10001:10001
WORKDIR /var/lib/tributary
VOLUME /var/lib/tributary
# Configuration comes from TRIBUTARY_* variables (TRIBUTARY_BOOTSTRAP_SERVERS
# means bootstrap.servers). Without it the worker refuses to start, naming the
# key, as Connect 4.2 does; the health check fails (saying so) until a broker
# answers; the in-memory dev cluster runs only with TRIBUTARY_DEV=true.
# The container listens on every interface, which
# tributary refuses without REST auth unless told otherwise: this image says
# so, as Kafka Connect's images run without auth. Set TRIBUTARY_REST_AUTH and
# TRIBUTARY_REST_AUTH_CREDENTIALS_FILE (and TRIBUTARY_HEALTHCHECK_AUTH for the
# health check) to protect it.
ENV TRIBUTARY_LISTENERS=http://0.0.0.0:8083 \
    TRIBUTARY_REST_ALLOW_UNAUTHENTICATED_REMOTE=true \
    TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME=/var/lib/tributary/tributary.db
EXPOSE 8083
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
    CMD ["/usr/local/bin/tributary-healthcheck"]
# tributary handles SIGTERM as a graceful shutdown.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/tributary"]

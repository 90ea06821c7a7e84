# innerpeace as a container: a release build on the tested Swift (6.3.1), run on Debian 12 slim with
# only the runtime libraries, fonts and the bundled catalog, as a non-root user, on a read-only
# root file system. Built and run by `bash scripts/container-test.sh` (podman, from local parts);
# on a Docker host it builds as it is:
#   docker build -t innerpeace .
#   docker run --rm --read-only --tmpfs /tmp -p 8080:8080 innerpeace
#
# BUILDER_IMAGE and RUNTIME_IMAGE name the base images (the public ones by default). A builder
# without Swift on it (the local test's) adds the toolchain's own system packages through
# BUILDER_PACKAGES and mounts the toolchain at /opt/swift.
ARG BUILDER_IMAGE=swift:6.3.1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS build
ARG BUILDER_PACKAGES=""
# The -dev packages of scripts/install-deps.sh (libavif-dev: AVIF) and binutils (strip), in one
# apt-get.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config libcairo2-dev libpango1.0-dev libfontconfig-dev libturbojpeg0-dev libjpeg62-turbo-dev libwebp-dev \
      libdeflate-dev libpng-dev liblcms2-dev libhyphen-dev libavif-dev binutils ${BUILDER_PACKAGES} \
    && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/swift/usr/bin:${PATH}
WORKDIR /src
COPY . .
# The standard library linked in (--static-swift-stdlib): the runtime image needs no Swift runtime
# (README "The container image" has the sizes of both ways). The binary is stripped of its debug
# information (a release build keeps it).
RUN swift build -c release --product innerpeace --static-swift-stdlib -j "$(nproc)" \
    && mkdir /out \
    && strip -o /out/innerpeace .build/release/innerpeace \
    && cp -R .build/release/innerpeace_InnerPeaceResources.resources /out/

FROM ${RUNTIME_IMAGE}
# Runtime libraries only, the hyphenation patterns and fallback fonts the README names, and
# fontconfig's fc-cache to build the font caches now (the root file system is read-only later).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcairo2 libpango-1.0-0 libpangocairo-1.0-0 libpangoft2-1.0-0 libfontconfig1 fontconfig libturbojpeg0 \
      libjpeg62-turbo libwebp7 libdeflate0 libpng16-16 liblcms2-2 libhyphen0 libavif15 \
      hyphen-en-us hyphen-de hyphen-fr hyphen-es hyphen-it hyphen-nl hyphen-pt-pt hyphen-pl hyphen-hu hyphen-ru \
      hyphen-uk hyphen-el \
      fonts-dejavu-core fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 innerpeace \
    && useradd --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin innerpeace
COPY --from=build /out/ /app/
RUN fc-cache --system-only --force && fc-cache --force /app/innerpeace_InnerPeaceResources.resources/Fonts
USER 10001:10001
# Every serve option can come from INNERPEACE_*; PORT (set by most platforms) picks the port.
# Fontconfig writes a cache it lacks under XDG_CACHE_HOME: /tmp, the one writable place.
ENV INNERPEACE_HOST=0.0.0.0 \
    XDG_CACHE_HOME=/tmp/cache
EXPOSE 8080
# Docker's health check (podman runs it with `podman healthcheck run`); Kubernetes runs the same
# command as an exec probe, or probes /healthz and /readyz over HTTP.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/app/innerpeace", "health"]
# SIGTERM drains: accepted requests are answered, then exit 0 (within --drain-timeout).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/innerpeace"]
CMD ["serve"]

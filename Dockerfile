# innerpeace as a container: a release build on the Swift image, run on slim Debian with only the
# runtime libraries and fonts. (Not built in this project's CI: no Docker engine runs there.)
FROM swift:6.1-bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config libcairo2-dev libpango1.0-dev libfontconfig-dev libturbojpeg0-dev libwebp-dev libdeflate-dev libpng-dev liblcms2-dev libhyphen-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --product innerpeace --static-swift-stdlib \
    && mkdir /out && cp .build/release/innerpeace /out/ \
    && cp -R .build/release/innerpeace_InnerPeaceResources.resources /out/

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcairo2 libpango-1.0-0 libpangocairo-1.0-0 libpangoft2-1.0-0 libfontconfig1 libturbojpeg0 libwebp7 \
      libdeflate0 libpng16-16 liblcms2-2 libhyphen0 hyphen-en-us hyphen-de hyphen-fr hyphen-es hyphen-it hyphen-nl \
      hyphen-pt-pt hyphen-pl hyphen-hu hyphen-ru hyphen-uk hyphen-el fonts-dejavu-core fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --uid 10001 innerpeace
COPY --from=build /out/ /app/
USER innerpeace
# Every serve option can come from INNERPEACE_*; PORT (set by most platforms) picks the port.
ENV INNERPEACE_HOST=0.0.0.0
EXPOSE 8080
ENTRYPOINT ["/app/innerpeace"]
CMD ["serve"]

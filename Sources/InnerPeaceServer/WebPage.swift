/// The page at `/`: the Inner Peace app on the web.
enum WebPage {
  /// What one page shows and says: its link-preview tags, the card it opens on, and the image a
  /// crawler or a browser without script gets.
  struct Content {
    /// `<title>` and `og:title`.
    var title: String
    /// `description`, `og:description`: the share message.
    var description: String
    /// The page's own absolute URL (`og:url`, canonical).
    var url: String
    /// The absolute, versioned og card (JPEG, 1200x630).
    var image: String
    /// `og:image:alt`: the quote and its author.
    var imageAlt: String
    /// The card the page opens on, without size or format (`/cards/3?picture=aqua.jpg`,
    /// `/today`); the script adds the window's size. Empty: the page keeps the og card and
    /// fetches nothing (a server that answers signed image URLs only).
    var firstCard: String
    /// The first card's quote page (`/q/3`), for Share.
    var firstPage: String
  }

  /// The page for `content`, every value HTML-escaped.
  static func html(_ content: Content) -> String {
    """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
    <meta name="color-scheme" content="dark">
    <title>\(Markup.escaped(content.title))</title>
    <meta name="description" content="\(Markup.escaped(content.description))">
    <link rel="canonical" href="\(Markup.escaped(content.url))">
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
    <link rel="icon" href="/favicon.ico" sizes="32x32">
    <meta property="og:type" content="website">
    <meta property="og:site_name" content="Inner Peace">
    <meta property="og:title" content="\(Markup.escaped(content.title))">
    <meta property="og:description" content="\(Markup.escaped(content.description))">
    <meta property="og:url" content="\(Markup.escaped(content.url))">
    <meta property="og:image" content="\(Markup.escaped(content.image))">
    <meta property="og:image:type" content="image/jpeg">
    <meta property="og:image:width" content="1200">
    <meta property="og:image:height" content="630">
    <meta property="og:image:alt" content="\(Markup.escaped(content.imageAlt))">
    <meta name="twitter:card" content="summary_large_image">
    <meta name="twitter:title" content="\(Markup.escaped(content.title))">
    <meta name="twitter:description" content="\(Markup.escaped(content.description))">
    <meta name="twitter:image" content="\(Markup.escaped(content.image))">
    <meta name="twitter:image:alt" content="\(Markup.escaped(content.imageAlt))">
    <style>\(style)</style>
    </head>
    <body data-first-card="\(Markup.escaped(content.firstCard))" data-first-page="\(Markup.escaped(content.firstPage))">
    <main>
    <div class="card" id="card" tabindex="0" role="button" aria-label="Show another quote" aria-describedby="quote">
    \(firstImage(content))
    </div>
    <button class="pill share" id="share" type="button">Share</button>
    <p class="pill status" id="status" role="status" aria-live="polite"></p>
    </main>
    <script>\(script)</script>
    </body>
    </html>
    """
  }

  /// The card's `<img>` before the script runs. With a first card to fetch, it has no source:
  /// the first paint is the dark page, the window's shape, and the script asks for the card of
  /// the window's size before any image is requested, so a phone never shows the landscape og
  /// card cropped to portrait (words cut at both sides); a browser without script gets the og
  /// card, whole (`contain`). Without a first card (a server that answers signed image URLs
  /// only) the og card is the card, whole as well.
  static func firstImage(_ content: Content) -> String {
    let alt = Markup.escaped(content.imageAlt)
    let og = "class=\"og\" alt=\"\(alt)\" src=\"\(Markup.escaped(content.image))\""
    if content.firstCard.isEmpty { return "<img id=\"quote\" \(og)>" }
    return "<img id=\"quote\" alt=\"\(alt)\">\n<noscript><img \(og)></noscript>"
  }

  /// The page's style sheet (its SHA-256 is in the Content-Security-Policy).
  static let style = #"""

    html, body {
      margin: 0;
      width: 100%;
      height: 100%;
      overflow: hidden;
      background: #000;
      color: #fff;
      font: 15px/1.3 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
    }
    .card {
      position: fixed;
      inset: 0;
      display: flex;
      align-items: center;
      justify-content: center;
      background: #000;
      cursor: pointer;
      touch-action: manipulation;
      -webkit-tap-highlight-color: transparent;
      user-select: none;
      -webkit-user-select: none;
    }
    .card:focus { outline: none; }
    .card:focus-visible {
      outline: 2px solid rgba(255, 255, 255, 0.85);
      outline-offset: -6px;
    }
    .card img {
      display: block;
      width: 100%;
      height: 100%;
      object-fit: cover;
      object-position: center;
      transition: opacity 0.45s ease;
      -webkit-user-drag: none;
    }
    .card img.og { object-fit: contain; }
    .card.loading img { opacity: 0.72; }
    /* Until the card of the window's shape comes: the dark page, then the card fades in. */
    .card img:not([src]) { visibility: hidden; opacity: 0; }
    .pill {
      position: fixed;
      z-index: 2;
      margin: 0;
      padding: 0.5em 1.1em;
      border: 1px solid rgba(255, 255, 255, 0.28);
      border-radius: 999px;
      /* Black at 60 % under white text: over a white photo the pill is #666 at most, 5.7:1. */
      background: rgba(0, 0, 0, 0.6);
      color: #fff;
      font: inherit;
      line-height: 1.2;
      -webkit-backdrop-filter: blur(8px);
      backdrop-filter: blur(8px);
    }
    .share {
      min-width: 48px;
      min-height: 48px;
      right: max(16px, env(safe-area-inset-right));
      bottom: max(16px, env(safe-area-inset-bottom));
      cursor: pointer;
      transition: background-color 0.2s ease;
    }
    .share:hover, .share:focus-visible { background: rgba(0, 0, 0, 0.75); }
    .share:focus { outline: none; }
    .share:focus-visible {
      outline: 2px solid rgba(255, 255, 255, 0.9);
      outline-offset: 2px;
    }
    .status {
      left: max(16px, env(safe-area-inset-left));
      bottom: max(16px, env(safe-area-inset-bottom));
      max-width: calc(100% - 160px);
      font-size: 13px;
      pointer-events: none;
      opacity: 1;
      transition: opacity 0.3s ease;
    }
    .status:empty { opacity: 0; }
    @media (prefers-reduced-motion: reduce) {
      .card img, .share, .status { transition: none; }
      .card.loading img { opacity: 1; }
    }
    """#

  /// The page's script (its SHA-256 is in the Content-Security-Policy).
  static let script = #"""
    (function () {
      "use strict";
      var card = document.getElementById("card");
      var img = document.getElementById("quote");
      var shareButton = document.getElementById("share");
      var statusBox = document.getElementById("status");
      // For tests and tools: what the page shows and has ready.
      var state = window.innerpeace = {
        loads: 0, shareMessage: "", pageURL: "", size: "", format: "", prefetched: false,
        tappedAt: 0, paintedAt: 0
      };
      var ACCEPT = "image/webp,image/jpeg;q=0.9,image/png;q=0.8";
      var LADDER = [480, 640, 800, 1080, 1280, 1600, 1920, 2560, 3200, 4096];
      var MIN_SIDE = 200;
      var MAX_SIDE = 4096;
      var current = null;
      var pending = null;
      var busy = false;
      var statusTimer = 0;
      var resizeTimer = 0;
      var WAITING = "A moment\u2026";
      // The card size for this window: its device pixels, the long side rounded up to a few
      // sizes and the aspect ratio to 1/32, so the card covers the window with at least a device
      // pixel per card pixel and a handful of sizes serve every screen.
      function cardSize() {
        var ratio = window.devicePixelRatio || 1;
        var w = Math.max(1, (window.innerWidth || document.documentElement.clientWidth || 1) * ratio);
        var h = Math.max(1, (window.innerHeight || document.documentElement.clientHeight || 1) * ratio);
        var longSide = Math.max(w, h);
        var shortSide = Math.min(w, h);
        var edge = MAX_SIDE;
        for (var i = 0; i < LADDER.length; i++) {
          if (LADDER[i] >= longSide) { edge = LADDER[i]; break; }
        }
        var other = Math.ceil(shortSide / longSide * 32) / 32 * edge;
        other = Math.min(MAX_SIDE, Math.max(MIN_SIDE, Math.ceil(other)));
        edge = Math.max(MIN_SIDE, edge);
        return w >= h ? { w: edge, h: other } : { w: other, h: edge };
      }
      function sizeKey(size) { return size.w + "x" + size.h; }
      function randomSeed() {
        if (window.crypto && window.crypto.getRandomValues) {
          return String(window.crypto.getRandomValues(new Uint32Array(1))[0]);
        }
        return String(Math.floor(Math.random() * 4294967296));
      }
      function say(text, millis) {
        clearTimeout(statusTimer);
        statusBox.textContent = text;
        if (millis) {
          statusTimer = setTimeout(function () { statusBox.textContent = ""; }, millis);
        }
      }
      function wait(millis) {
        return new Promise(function (resolve) { setTimeout(resolve, millis); });
      }
      function retryDelay(response) {
        var value = response && response.headers.get("Retry-After");
        var seconds = value ? Number(value) : 1;
        if (!isFinite(seconds)) { seconds = 1; }
        return Math.min(Math.max(seconds, 0), 30) * 1000;
      }
      function decodeMessage(raw) {
        if (!raw) { return ""; }
        try { return decodeURIComponent(raw); } catch (e) { return raw; }
      }
      function withSize(base, size) {
        return base + (base.indexOf("?") < 0 ? "?" : "&") + "w=" + size.w + "&h=" + size.h;
      }
      // Fetches a card and decodes it off screen: resolves to everything needed to show it.
      function load(base, size, retried) {
        var url = withSize(base, size);
        var controller = window.AbortController ? new AbortController() : null;
        var timer = controller ? setTimeout(function () { controller.abort(); }, 20000) : 0;
        var options = { headers: { Accept: ACCEPT } };
        if (controller) { options.signal = controller.signal; }
        return fetch(url, options).then(function (response) {
          clearTimeout(timer);
          if (!response.ok) {
            if (retried) { throw new Error("HTTP " + response.status); }
            return wait(retryDelay(response)).then(function () { return load(base, size, true); });
          }
          return response.blob().then(function (blob) {
            var objectURL = URL.createObjectURL(blob);
            var probe = new Image();
            probe.src = objectURL;
            var ready = probe.decode ? probe.decode() : new Promise(function (resolve, reject) {
              probe.onload = resolve;
              probe.onerror = reject;
            });
            return ready.then(function () {
              var index = response.headers.get("X-Quote-Index");
              var header = response.headers.get("X-Share-Message");
              // A long message is not sent as a header: a catalog quote's is in /quotes/{index}.
              var message = header || !index ? Promise.resolve(decodeMessage(header)) :
                fetch("/quotes/" + index).then(function (quote) {
                  return quote.ok ? quote.json() : {};
                }).then(function (quote) { return quote.shareMessage || ""; }, function () { return ""; });
              return message.then(function (text) {
                return {
                  objectURL: objectURL, image: probe, size: sizeKey(size), base: base,
                  format: (response.headers.get("Content-Type") || "").replace("image/", ""),
                  message: text,
                  page: index ? new URL("/q/" + index, window.location.href).href : ""
                };
              });
            }, function (error) {
              URL.revokeObjectURL(objectURL);
              throw error;
            });
          });
        }, function (error) {
          clearTimeout(timer);
          if (retried) { throw error; }
          return wait(1000).then(function () { return load(base, size, true); });
        });
      }
      function randomCard() {
        var size = cardSize();
        return load("/random?seed=" + randomSeed(), size, false);
      }
      // Shows a decoded card at once; the previous one's memory is released.
      function show(next) {
        var previous = current;
        current = next;
        img.classList.remove("og");
        img.src = next.objectURL;
        img.alt = next.message || "A quote over a nature photograph";
        state.loads += 1;
        state.shareMessage = next.message;
        state.pageURL = next.page;
        state.size = next.size;
        state.format = next.format;
        requestAnimationFrame(function () { state.paintedAt = performance.now(); });
        if (previous) { URL.revokeObjectURL(previous.objectURL); }
      }
      // Starts loading the card the next tap shows.
      function prefetch() {
        state.prefetched = false;
        var entry = { promise: null, ready: null };
        entry.promise = randomCard().then(function (next) {
          entry.ready = next;
          if (pending === entry) { state.prefetched = true; }
          return next;
        });
        entry.promise.catch(function () {});
        pending = entry;
      }
      function takePending() {
        var entry = pending;
        pending = null;
        if (entry && entry.ready && entry.ready.size === sizeKey(cardSize())) {
          return Promise.resolve(entry.ready);
        }
        if (entry && !entry.ready) {
          return entry.promise.then(function (next) {
            return next.size === sizeKey(cardSize()) ? next : randomCard();
          }, function () { return randomCard(); });
        }
        if (entry && entry.ready) { URL.revokeObjectURL(entry.ready.objectURL); }
        return randomCard();
      }
      function present(promise) {
        busy = true;
        card.setAttribute("aria-busy", "true");
        var slow = setTimeout(function () { card.classList.add("loading"); }, 150);
        return promise.then(function (next) {
          show(next);
          if (statusBox.textContent === WAITING) { say(""); }
        }, function () {
          say("No new card just now. Tap to try again.", 4000);
        }).then(function () {
          clearTimeout(slow);
          busy = false;
          card.classList.remove("loading");
          card.removeAttribute("aria-busy");
          prefetch();
        });
      }
      function nextCard() {
        if (busy) { return; }
        present(takePending());
      }
      function firstCard() {
        var size = cardSize();
        var base = document.body.getAttribute("data-first-card") || "";
        var page = document.body.getAttribute("data-first-page") || "";
        if (!base) {
          state.shareMessage = img.alt;
          state.pageURL = page ? new URL(page, window.location.href).href : "";
          return;
        }
        var promise = base ? load(base, size, false).then(function (next) {
          if (!next.page && page) { next.page = new URL(page, window.location.href).href; }
          return next;
        }) : randomCard();
        present(promise);
      }
      function copyText(text) {
        if (navigator.clipboard && navigator.clipboard.writeText) {
          return navigator.clipboard.writeText(text).then(function () { return true; }, function () { return false; });
        }
        return Promise.resolve(false);
      }
      function share(event) {
        event.stopPropagation();
        var message = state.shareMessage;
        var url = state.pageURL;
        if (!message) { return; }
        if (navigator.share) {
          var data = { title: "Inner Peace", text: message };
          if (url) { data.url = url; }
          navigator.share(data).catch(function (error) {
            if (!error || error.name !== "AbortError") {
              return copyText(url ? message + " " + url : message).then(function (ok) {
                say(ok ? "Link copied" : "Could not share", 2000);
              });
            }
          });
          return;
        }
        copyText(url ? message + " " + url : message).then(function (ok) {
          say(ok ? "Link copied" : "Could not copy", 2000);
        });
      }
      card.addEventListener("click", function () {
        state.tappedAt = performance.now();
        nextCard();
      });
      card.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && !event.repeat) {
          event.preventDefault();
          nextCard();
        }
      });
      document.addEventListener("keydown", function (event) {
        if (event.key !== " " && event.code !== "Space") { return; }
        if (event.altKey || event.ctrlKey || event.metaKey) { return; }
        var target = event.target;
        if (target && target !== card && target.closest && target.closest("button, a, input, textarea, select")) {
          return;
        }
        event.preventDefault();
        if (!event.repeat) { nextCard(); }
      });
      shareButton.addEventListener("click", share);
      shareButton.addEventListener("keydown", function (event) { event.stopPropagation(); });
      // Another window shape or size: cover keeps the card edge to edge at once; then the same
      // card (same quote, photo and seed) comes at the new size, and the next one too.
      window.addEventListener("resize", function () {
        clearTimeout(resizeTimer);
        resizeTimer = setTimeout(function () {
          if (busy || !current || current.size === sizeKey(cardSize())) { return; }
          if (pending && pending.ready) { URL.revokeObjectURL(pending.ready.objectURL); }
          pending = null;
          var page = current.page;
          var size = cardSize();
          present(load(current.base, size, false).then(function (next) {
            if (!next.page) { next.page = page; }
            return next;
          }));
        }, 250);
      });
      firstCard();
    })();
    """#
}

/// The page at `/`: the Inner Peace app on the web.
enum WebPage {
  static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
    <meta name="color-scheme" content="dark">
    <meta name="description" content="Calm quote cards: a quote over a nature photograph. Tap for another.">
    <title>Inner Peace</title>
    <style>
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
      object-fit: contain;
      object-position: center;
      transition: opacity 0.45s ease;
      -webkit-user-drag: none;
    }
    .card.loading img { opacity: 0.72; }
    .pill {
      position: fixed;
      z-index: 2;
      margin: 0;
      padding: 0.5em 1.1em;
      border: 1px solid rgba(255, 255, 255, 0.28);
      border-radius: 999px;
      background: rgba(20, 20, 20, 0.38);
      color: #fff;
      font: inherit;
      line-height: 1.2;
      -webkit-backdrop-filter: blur(8px);
      backdrop-filter: blur(8px);
    }
    .share {
      right: max(16px, env(safe-area-inset-right));
      bottom: max(16px, env(safe-area-inset-bottom));
      cursor: pointer;
      opacity: 0.78;
      transition: opacity 0.2s ease, background-color 0.2s ease;
    }
    .share:hover, .share:focus-visible {
      opacity: 1;
      background: rgba(40, 40, 40, 0.55);
    }
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
    </style>
    </head>
    <body>
    <main>
    <div class="card" id="card" tabindex="0" role="button" aria-label="Show another quote" aria-describedby="quote">
    <img id="quote" alt="" data-quote-index=""
         src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">
    </div>
    <button class="pill share" id="share" type="button">Share</button>
    <p class="pill status" id="status" role="status" aria-live="polite"></p>
    </main>
    <script>
    (function () {
      "use strict";
      var card = document.getElementById("card");
      var img = document.getElementById("quote");
      var shareButton = document.getElementById("share");
      var statusBox = document.getElementById("status");
      var state = window.innerpeace = { loads: 0, shareMessage: "", preset: "" };
      var nextPreset = pickPreset();
      var objectURL = null;
      var stableURL = "";
      var busy = false;
      var statusTimer = 0;
      var resizeTimer = 0;
      var WAITING = "A moment\u2026";
      function pickPreset() {
        var w = window.innerWidth || document.documentElement.clientWidth || 1;
        var h = window.innerHeight || document.documentElement.clientHeight || 1;
        var aspect = w / h;
        if (aspect >= 1.45) { return "og"; }
        if (aspect <= 0.7) { return "story"; }
        if (aspect >= 1.2) { return "classic"; }
        return "square";
      }
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
        if (value) {
          var seconds = Number(value);
          if (!isFinite(seconds)) {
            var when = Date.parse(value);
            seconds = isNaN(when) ? 1 : (when - Date.now()) / 1000;
          }
          return Math.min(Math.max(seconds, 0), 30) * 1000;
        }
        return 1000;
      }
      function decodeMessage(raw) {
        if (!raw) { return ""; }
        try { return decodeURIComponent(raw); } catch (e) { return raw; }
      }
      function fetchCard(preset) {
        var controller = window.AbortController ? new AbortController() : null;
        var timer = controller ? setTimeout(function () { controller.abort(); }, 20000) : 0;
        var url = "/random.png?preset=" + preset + "&seed=" + randomSeed();
        var options = { cache: "no-store" };
        if (controller) { options.signal = controller.signal; }
        return fetch(url, options).then(function (response) {
          if (!response.ok) { return { response: response, blob: null }; }
          return response.blob().then(function (blob) { return { response: response, blob: blob }; });
        }).finally(function () { clearTimeout(timer); });
      }
      function show(response, blob, preset) {
        var url = URL.createObjectURL(blob);
        var previous = objectURL;
        var message = decodeMessage(response.headers.get("X-Share-Message"));
        var location = response.headers.get("Content-Location");
        var probe = new Image();
        probe.src = url;
        var ready = probe.decode ? probe.decode() : new Promise(function (resolve, reject) {
          probe.onload = resolve;
          probe.onerror = reject;
        });
        return ready.then(function () {
          objectURL = url;
          img.src = url;
          img.alt = message || "A quote over a nature photograph";
          img.setAttribute("data-quote-index", response.headers.get("X-Quote-Index") || "");
          stableURL = location ? new URL(location, window.location.href).href : "";
          if (previous) { URL.revokeObjectURL(previous); }
          return img.decode ? img.decode().catch(function () {}) : null;
        }, function (error) {
          URL.revokeObjectURL(url);
          throw error;
        }).then(function () {
          state.loads += 1;
          state.shareMessage = message;
          state.preset = preset;
        });
      }
      function attempt(preset, retried) {
        return fetchCard(preset).then(function (result) {
          if (result.blob) { return show(result.response, result.blob, preset); }
          if (retried) { throw new Error("HTTP " + result.response.status); }
          say(WAITING);
          return wait(retryDelay(result.response)).then(function () { return attempt(preset, true); });
        }, function (error) {
          if (retried) { throw error; }
          say(WAITING);
          return wait(1000).then(function () { return attempt(preset, true); });
        });
      }
      function nextCard() {
        if (busy) { return; }
        busy = true;
        var preset = nextPreset;
        card.classList.add("loading");
        card.setAttribute("aria-busy", "true");
        attempt(preset, false).then(function () {
          if (statusBox.textContent === WAITING) { say(""); }
        }, function () {
          say("No new card just now. Tap to try again.", 4000);
        }).then(function () {
          busy = false;
          card.classList.remove("loading");
          card.removeAttribute("aria-busy");
        });
      }
      function copyWithTextarea(text) {
        var area = document.createElement("textarea");
        var focused = document.activeElement;
        area.value = text;
        area.setAttribute("readonly", "");
        area.setAttribute("aria-hidden", "true");
        area.style.position = "fixed";
        area.style.top = "0";
        area.style.left = "0";
        area.style.width = "1px";
        area.style.height = "1px";
        area.style.opacity = "0";
        document.body.appendChild(area);
        area.focus();
        area.select();
        var ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        document.body.removeChild(area);
        if (focused && focused.focus) { focused.focus(); }
        return ok;
      }
      function copyText(text) {
        if (navigator.clipboard && navigator.clipboard.writeText) {
          return navigator.clipboard.writeText(text).then(function () { return true; }, function () {
            return copyWithTextarea(text);
          });
        }
        return Promise.resolve(copyWithTextarea(text));
      }
      function copyShare(message, url) {
        return copyText(url ? message + " " + url : message).then(function (ok) {
          say(ok ? "Copied" : "Could not copy", 2000);
        });
      }
      function share(event) {
        event.stopPropagation();
        var message = state.shareMessage;
        var url = stableURL;
        if (!message) { return; }
        if (navigator.share) {
          var data = { text: message };
          if (url) { data.url = url; }
          navigator.share(data).catch(function (error) {
            if (!error || error.name !== "AbortError") { return copyShare(message, url); }
          });
          return;
        }
        copyShare(message, url);
      }
      card.addEventListener("click", function () { nextCard(); });
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
      window.addEventListener("resize", function () {
        clearTimeout(resizeTimer);
        resizeTimer = setTimeout(function () { nextPreset = pickPreset(); }, 200);
      });
      nextCard();
    })();
    </script>
    </body>
    </html>
    """#
}

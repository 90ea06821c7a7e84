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

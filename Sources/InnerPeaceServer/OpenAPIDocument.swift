/// The OpenAPI 3.1 description served at `/openapi.yaml`. A test checks that it lists every route.
enum OpenAPIDocument {
  static let yaml = #"""
    openapi: 3.1.0
    info:
      title: innerpeace
      version: 0.1.0
      summary: Calm quote cards as images.
      description: |
        Quote cards (white italic serif, a soft dark halo, a nature photograph) rendered on demand.
        Image endpoints come in three formats: the path's extension (.png, .jpg, .webp) decides it.
        Errors are JSON: {"error": {"parameter": "w", "message": "..."}}. Card limits: a side
        from 200 to 4096 px (at most 4096 x 4096 pixels), text up to 5,000 characters and 20,000
        UTF-8 bytes, at most 8 combining marks on one character, a request URI up to 32,768 bytes.
        Connection limits: a request head up to 64 KiB and 100 header fields (more is 431), a head
        within 10 s of its first byte and a body within 30 s of its head (slower ones are closed),
        and past the open-connection limit an immediate 503 (all configurable, see the README).
      license: { name: MIT }
    paths:
      /random.png:
        get:
          operationId: randomPng
          summary: A random card (png)
          description: Uncacheable. The headers name the quote and picture chosen, and Content-Location gives the card's stable URL.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
            - name: seed
              in: query
              description: Seed for the random choice; the same seed picks the same quote and picture.
              schema: { type: integer, minimum: 0, maximum: 18446744073709551615 }
          responses:
            '200':
              description: 'The card. Cache-Control: no-store.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /random.jpg:
        get:
          operationId: randomJpg
          summary: A random card (jpg)
          description: Uncacheable. The headers name the quote and picture chosen, and Content-Location gives the card's stable URL.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
            - name: seed
              in: query
              description: Seed for the random choice; the same seed picks the same quote and picture.
              schema: { type: integer, minimum: 0, maximum: 18446744073709551615 }
          responses:
            '200':
              description: 'The card. Cache-Control: no-store.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /random.webp:
        get:
          operationId: randomWebp
          summary: A random card (webp)
          description: Uncacheable. The headers name the quote and picture chosen, and Content-Location gives the card's stable URL.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
            - name: seed
              in: query
              description: Seed for the random choice; the same seed picks the same quote and picture.
              schema: { type: integer, minimum: 0, maximum: 18446744073709551615 }
          responses:
            '200':
              description: 'The card. Cache-Control: no-store.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /card.png:
        get:
          operationId: cardPng
          summary: A card for any text (png)
          description: Deterministic for the same parameters; cacheable for a day.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - name: text
              in: query
              required: true
              description: The quote, never markup; its straight quotes, '--' and '...' become typographic ones unless straightQuotes=true. At most 5,000 characters (413 beyond).
              schema: { type: string, maxLength: 5000 }
            - name: picture
              in: query
              description: A catalog picture by file name (see /quotes for the catalog); default chosen from the text.
              schema: { type: string }
            - name: author
              in: query
              description: The author line; empty for none. (On this endpoint, author is the name, not a switch.)
              schema: { type: string, maxLength: 200 }
            - $ref: '#/components/parameters/straightQuotes'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=86400.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '413': { $ref: '#/components/responses/TextTooLarge' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /card.jpg:
        get:
          operationId: cardJpg
          summary: A card for any text (jpg)
          description: Deterministic for the same parameters; cacheable for a day.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - name: text
              in: query
              required: true
              description: The quote, never markup; its straight quotes, '--' and '...' become typographic ones unless straightQuotes=true. At most 5,000 characters (413 beyond).
              schema: { type: string, maxLength: 5000 }
            - name: picture
              in: query
              description: A catalog picture by file name (see /quotes for the catalog); default chosen from the text.
              schema: { type: string }
            - name: author
              in: query
              description: The author line; empty for none. (On this endpoint, author is the name, not a switch.)
              schema: { type: string, maxLength: 200 }
            - $ref: '#/components/parameters/straightQuotes'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=86400.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '413': { $ref: '#/components/responses/TextTooLarge' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /card.webp:
        get:
          operationId: cardWebp
          summary: A card for any text (webp)
          description: Deterministic for the same parameters; cacheable for a day.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - name: text
              in: query
              required: true
              description: The quote, never markup; its straight quotes, '--' and '...' become typographic ones unless straightQuotes=true. At most 5,000 characters (413 beyond).
              schema: { type: string, maxLength: 5000 }
            - name: picture
              in: query
              description: A catalog picture by file name (see /quotes for the catalog); default chosen from the text.
              schema: { type: string }
            - name: author
              in: query
              description: The author line; empty for none. (On this endpoint, author is the name, not a switch.)
              schema: { type: string, maxLength: 200 }
            - $ref: '#/components/parameters/straightQuotes'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=86400.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '413': { $ref: '#/components/responses/TextTooLarge' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /today.png:
        get:
          operationId: todayPng
          summary: The quote of the day (png)
          description: The same card for everyone on a date in the server's time zone (--time-zone), cacheable until that midnight.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=<seconds until midnight>.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /today.jpg:
        get:
          operationId: todayJpg
          summary: The quote of the day (jpg)
          description: The same card for everyone on a date in the server's time zone (--time-zone), cacheable until that midnight.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=<seconds until midnight>.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /today.webp:
        get:
          operationId: todayWebp
          summary: The quote of the day (webp)
          description: The same card for everyone on a date in the server's time zone (--time-zone), cacheable until that midnight.
          parameters:
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=<seconds until midnight>.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
                Content-Location: { $ref: '#/components/headers/ContentLocation' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
      /cards/{quote}.png:
        get:
          operationId: cardPngByIndex
          summary: A catalog quote's stable card (png)
          description: Immutable, for CDNs. Answers 304 to a matching If-None-Match.
          parameters:
            - name: quote
              in: path
              required: true
              description: The quote's index in the catalog (see /quotes).
              schema: { type: integer, minimum: 0 }
            - name: picture
              in: query
              description: A catalog picture by file name; default picture number (quote mod pictures).
              schema: { type: string }
            - name: If-None-Match
              in: header
              schema: { type: string }
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=31536000, immutable.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
            '304':
              description: Not modified (the ETag matched).
      /cards/{quote}.jpg:
        get:
          operationId: cardJpgByIndex
          summary: A catalog quote's stable card (jpg)
          description: Immutable, for CDNs. Answers 304 to a matching If-None-Match.
          parameters:
            - name: quote
              in: path
              required: true
              description: The quote's index in the catalog (see /quotes).
              schema: { type: integer, minimum: 0 }
            - name: picture
              in: query
              description: A catalog picture by file name; default picture number (quote mod pictures).
              schema: { type: string }
            - name: If-None-Match
              in: header
              schema: { type: string }
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=31536000, immutable.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
            '304':
              description: Not modified (the ETag matched).
      /cards/{quote}.webp:
        get:
          operationId: cardWebpByIndex
          summary: A catalog quote's stable card (webp)
          description: Immutable, for CDNs. Answers 304 to a matching If-None-Match.
          parameters:
            - name: quote
              in: path
              required: true
              description: The quote's index in the catalog (see /quotes).
              schema: { type: integer, minimum: 0 }
            - name: picture
              in: query
              description: A catalog picture by file name; default picture number (quote mod pictures).
              schema: { type: string }
            - name: If-None-Match
              in: header
              schema: { type: string }
            - $ref: '#/components/parameters/preset'
            - $ref: '#/components/parameters/w'
            - $ref: '#/components/parameters/h'
            - $ref: '#/components/parameters/format'
            - $ref: '#/components/parameters/align'
            - $ref: '#/components/parameters/author'
          responses:
            '200':
              description: 'The card. Cache-Control: public, max-age=31536000, immutable.'
              headers:
                Cache-Control: { $ref: '#/components/headers/CacheControl' }
                ETag: { $ref: '#/components/headers/ETag' }
                X-Quote-Index: { $ref: '#/components/headers/QuoteIndex' }
                X-Picture: { $ref: '#/components/headers/Picture' }
                X-Font-Size: { $ref: '#/components/headers/FontSize' }
                X-Text-Truncated: { $ref: '#/components/headers/TextTruncated' }
                X-Missing-Glyphs: { $ref: '#/components/headers/MissingGlyphs' }
                X-Share-Message: { $ref: '#/components/headers/ShareMessage' }
              content:
                image/png: { schema: { type: string, contentMediaType: image/png } }
                image/jpeg: { schema: { type: string, contentMediaType: image/jpeg } }
                image/webp: { schema: { type: string, contentMediaType: image/webp } }
            '400': { $ref: '#/components/responses/BadParameter' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
            '414': { $ref: '#/components/responses/URITooLong' }
            '500': { $ref: '#/components/responses/RenderFailed' }
            '503': { $ref: '#/components/responses/Busy' }
            '304':
              description: Not modified (the ETag matched).
      /quotes:
        get:
          operationId: listQuotes
          summary: Every catalog quote, with its share message and image URL
          responses:
            '200':
              description: The catalog.
              content:
                application/json:
                  schema: { type: array, items: { $ref: '#/components/schemas/Quote' } }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
      /quotes/{index}:
        get:
          operationId: getQuote
          summary: One catalog quote
          parameters:
            - name: index
              in: path
              required: true
              schema: { type: integer, minimum: 0 }
          responses:
            '200':
              description: The quote.
              content:
                application/json:
                  schema: { $ref: '#/components/schemas/Quote' }
            '404': { $ref: '#/components/responses/NotFound' }
            '405': { $ref: '#/components/responses/MethodNotAllowed' }
      /healthz:
        get:
          operationId: health
          summary: Liveness
          responses:
            '200':
              description: The service is up.
              content:
                application/json:
                  schema:
                    type: object
                    required: [status]
                    properties:
                      status: { type: string, const: ok }
                      quotes: { type: integer }
                      pictures: { type: integer }
      /metrics:
        get:
          operationId: metrics
          summary: Prometheus metrics
          description: Requests by route and status, render durations, cache hits and misses, renders in flight, rejected requests.
          responses:
            '200':
              description: Prometheus text exposition format 0.0.4.
              content:
                text/plain: { schema: { type: string } }
      /openapi.yaml:
        get:
          operationId: openapi
          summary: This document
          responses:
            '200':
              description: OpenAPI 3.1.
              content:
                application/yaml: { schema: { type: string } }
      /:
        get:
          operationId: page
          summary: The web page (the app on the web)
          responses:
            '200':
              description: HTML.
              content:
                text/html: { schema: { type: string } }
    components:
      parameters:
        preset:
          name: preset
          in: query
          description: classic (2048x1536), og (1200x630), square (1080x1080), story (1080x1920) or WxH. Not with w and h.
          schema: { type: string, default: og }
        w:
          name: w
          in: query
          description: Canvas width in pixels (with h, instead of preset).
          schema: { type: integer, minimum: 200, maximum: 4096 }
        h:
          name: h
          in: query
          description: Canvas height in pixels (with w, instead of preset).
          schema: { type: integer, minimum: 200, maximum: 4096 }
        format:
          name: format
          in: query
          description: png, jpeg or webp; must agree with the path's extension (the .png paths accept any).
          schema: { type: string, enum: [png, jpeg, jpg, webp] }
        align:
          name: align
          in: query
          description: natural (left, right for right-to-left scripts) or center.
          schema: { type: string, enum: [natural, center], default: natural }
        author:
          name: author
          in: query
          description: false leaves out the author line.
          schema: { type: string, enum: ['true', 'false'] }
        straightQuotes:
          name: straightQuotes
          in: query
          description: >-
            true draws text and author as typed. By default straight quotes and apostrophes become
            typographic ones (“ ” ‘ ’), -- an em dash and ... an ellipsis. Catalog quotes are always
            drawn as written.
          schema: { type: string, enum: ['true', 'false'], default: 'false' }
      headers:
        CacheControl:
          schema: { type: string }
        ETag:
          description: A strong validator of the card's bytes.
          schema: { type: string }
        ContentLocation:
          description: The card's stable URL under /cards.
          schema: { type: string }
        QuoteIndex:
          description: The catalog index of the quote (absent for custom text).
          schema: { type: integer }
        Picture:
          description: The background picture's catalog name.
          schema: { type: string }
        FontSize:
          description: The fitted quote size in pixels.
          schema: { type: integer }
        TextTruncated:
          description: true when the text did not fit at the minimum size and was ellipsized.
          schema: { type: string, enum: ['true', 'false'] }
        MissingGlyphs:
          description: >-
            How many glyphs of the quote and author line no installed font could draw (each is
            drawn as a box); 0 when every character has a face.
          schema: { type: integer, minimum: 0 }
        ShareMessage:
          description: The share message, "<text>" — <author>, percent-encoded UTF-8.
          schema: { type: string }
        RetryAfter:
          schema: { type: integer }
      schemas:
        Quote:
          type: object
          required: [index, text, author, shareMessage, imageURL]
          properties:
            index: { type: integer }
            text: { type: string }
            author: { type: string }
            shareMessage: { type: string }
            imageURL: { type: string }
        Error:
          type: object
          required: [error]
          properties:
            error:
              type: object
              required: [message]
              properties:
                parameter: { type: string, description: The query parameter at fault, when there is one. }
                message: { type: string }
      responses:
        BadParameter:
          description: A parameter is missing or invalid.
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        NotFound:
          description: Unknown quote, picture or path.
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        MethodNotAllowed:
          description: Only GET is served.
          headers:
            Allow: { schema: { type: string } }
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        TextTooLarge:
          description: The text is over the limit.
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        URITooLong:
          description: The request URI is over 32,768 bytes (whatever its length).
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        RenderFailed:
          description: The card could not be rendered (a public message; details are in the server log).
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
        Busy:
          description: >-
            The render pool and its queue are full, or the server has too many open connections;
            try again after Retry-After seconds.
          headers:
            Retry-After: { $ref: '#/components/headers/RetryAfter' }
          content:
            application/json: { schema: { $ref: '#/components/schemas/Error' } }
    """#
}

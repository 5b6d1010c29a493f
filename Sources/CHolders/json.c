// The C writers' JSON (the census, a scan's HOLDERS-VALUE for them). Built in malloc
// memory because the caller frees it with cholders_free; it is built only after a memory
// scan has finished, and its words are text, never raw addresses, so they cannot become
// holders.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void append(ch_json *json, const char *bytes, size_t length) {
  if (json->failed) return;
  if (json->length + length + 1 > json->capacity) {
    size_t capacity = json->capacity ? json->capacity * 2 : 1024;
    while (capacity < json->length + length + 1) capacity *= 2;
    char *bigger = realloc(json->bytes, capacity);
    if (bigger == NULL) {
      json->failed = 1;
      return;
    }
    json->bytes = bigger;
    json->capacity = capacity;
  }
  memcpy(json->bytes + json->length, bytes, length);
  json->length += length;
  json->bytes[json->length] = 0;
}

void ch_json_raw(ch_json *json, const char *text) { append(json, text, strlen(text)); }

/// The code point of the valid UTF-8 sequence at `s` and its length (1-4), or 0 when it is
/// invalid (overlong forms, surrogates and code points above U+10FFFF included).
static size_t utf8_decode(const unsigned char *s, size_t left, uint32_t *code_point) {
  unsigned char c = s[0];
  size_t n;
  uint32_t min, cp;
  if (c < 0x80) {
    *code_point = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    n = 2, min = 0x80, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, min = 0x800, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (left < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return n;
}

/// Code points a terminal would act on: written as \u escapes, never raw.
static int escaped_code_point(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void cholders_json_escape(const char *text, size_t length,
                          void (*sink)(void *context, const char *bytes, size_t length),
                          void *context) {
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;
  while (i < length) {
    uint32_t cp = 0;
    size_t n = utf8_decode(s + i, length - i, &cp);
    if (n == 0) {
      sink(context, "\xef\xbf\xbd", 3);  // U+FFFD for each invalid byte
      i++;
    } else if (cp == '"' || cp == '\\') {
      char escaped[2] = {'\\', (char)cp};
      sink(context, escaped, 2);
      i++;
    } else if (escaped_code_point(cp)) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", (unsigned)cp);
      sink(context, escaped, 6);
      i += n;
    } else {
      sink(context, text + i, n);
      i += n;
    }
  }
}

static void append_to_json(void *json, const char *bytes, size_t length) {
  append(json, bytes, length);
}

void ch_json_string(ch_json *json, const char *text, size_t length) {
  append(json, "\"", 1);
  cholders_json_escape(text, length, append_to_json, json);
  append(json, "\"", 1);
}

void ch_json_hex(ch_json *json, uintptr_t value) {
  char text[32];
  int n = snprintf(text, sizeof text, "\"0x%lx\"", (unsigned long)value);
  append(json, text, (size_t)n);
}

void ch_json_int(ch_json *json, int64_t value) {
  char text[32];
  int n = snprintf(text, sizeof text, "%lld", (long long)value);
  append(json, text, (size_t)n);
}

void cholders_free(char *json) { free(json); }

// The preload's log text: a malloc'ed buffer and the JSON string escaping the log format
// asks of every writer (C0 controls, DEL, C1 controls, U+2028/U+2029 and the bidirectional
// overrides as \u escapes; each byte that is not valid UTF-8 as U+FFFD).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

void preload_append_bytes(preload_text *text, const char *bytes, size_t length) {
  if (text->failed) return;
  if (text->length + length + 1 > text->capacity) {
    size_t capacity = text->capacity ? text->capacity * 2 : 4096;
    while (capacity < text->length + length + 1) capacity *= 2;
    char *bigger = realloc(text->bytes, capacity);
    if (bigger == NULL) {
      text->failed = 1;
      return;
    }
    text->bytes = bigger;
    text->capacity = capacity;
  }
  memcpy(text->bytes + text->length, bytes, length);
  text->length += length;
  text->bytes[text->length] = 0;
}

void preload_append(preload_text *text, const char *string) {
  preload_append_bytes(text, string, strlen(string));
}

void preload_append_int(preload_text *text, int64_t value) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%lld", (long long)value);
  preload_append_bytes(text, digits, (size_t)n);
}

/// The code point of the valid UTF-8 sequence at `s` and its length, or length 0.
static size_t decode(const unsigned char *s, size_t left, uint32_t *code_point) {
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

static int escaped_code_point(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void preload_append_json_string(preload_text *text, const char *bytes, size_t length) {
  preload_append_bytes(text, "\"", 1);
  const unsigned char *s = (const unsigned char *)bytes;
  size_t i = 0;
  while (i < length) {
    uint32_t cp = 0;
    size_t n = decode(s + i, length - i, &cp);
    if (n == 0) {
      preload_append_bytes(text, "\xef\xbf\xbd", 3);
      i++;
    } else if (cp == '"' || cp == '\\') {
      char escaped[2] = {'\\', (char)cp};
      preload_append_bytes(text, escaped, 2);
      i++;
    } else if (escaped_code_point(cp)) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", (unsigned)cp);
      preload_append_bytes(text, escaped, 6);
      i += n;
    } else {
      preload_append_bytes(text, bytes + i, n);
      i += n;
    }
  }
  preload_append_bytes(text, "\"", 1);
}

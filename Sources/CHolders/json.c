// The JSON text of a scan. Built in malloc memory because the caller frees it with
// cholders_free; it is built only after the memory scan has finished, so its words
// (text, never raw addresses) cannot become holders.
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

/// Length of the valid UTF-8 sequence at `s` (1-4), or 0 when it is invalid (overlong
/// forms, surrogates and code points above U+10FFFF included).
static size_t utf8_sequence(const unsigned char *s, size_t left) {
  unsigned char c = s[0];
  size_t n;
  uint32_t min, cp;
  if (c < 0x80) return 1;
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
  return n;
}

void ch_json_string(ch_json *json, const char *text, size_t length) {
  append(json, "\"", 1);
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;
  while (i < length) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      char escaped[2] = {'\\', (char)c};
      append(json, escaped, 2);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      append(json, escaped, 6);
      i++;
    } else {
      size_t n = utf8_sequence(s + i, length - i);
      if (n == 0) {
        append(json, "\xef\xbf\xbd", 3);  // U+FFFD for each invalid byte
        i++;
      } else {
        append(json, text + i, n);
        i += n;
      }
    }
  }
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

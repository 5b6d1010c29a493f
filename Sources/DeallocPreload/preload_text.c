// The preload's log text: a malloc'ed buffer, with strings escaped by the C writers' one
// rule (cholders_json_escape).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "CHoldersExtras.h"
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

static void append_to_text(void *text, const char *bytes, size_t length) {
  preload_append_bytes(text, bytes, length);
}

void preload_append_json_string(preload_text *text, const char *bytes, size_t length) {
  preload_append_bytes(text, "\"", 1);
  cholders_json_escape(bytes, length, append_to_text, text);
  preload_append_bytes(text, "\"", 1);
}

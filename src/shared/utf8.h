/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* True if s is well-formed UTF-8 (RFC 3629 section 4): no overlong forms, no surrogates, no
 * code points above U+10FFFF. */
bool utf8_is_valid(const char *s) _pure_;

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* RFC 1035 section 2.3.4 and RFC 1123 section 2.1: at most 253 characters (a fully qualified
 * name's trailing dot not counted), labels of 1..63 letters, digits and inner hyphens. */
#define HOSTNAME_MAX 253U
#define HOSTNAME_LABEL_MAX 63U

/* A host name as RFC 1123 section 2.1 allows it, with one optional trailing dot. A name whose
 * last label is all digits is refused: RFC 1123 keeps that shape for dotted-decimal addresses,
 * so "1.2.3.256" is a typo, not a host. */
bool hostname_is_valid(const char *s) _pure_;

/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "nts.h"

static const char *const nts_error_table[_NTS_ERROR_MAX] = {
        [NTS_OK]                                        = "success",

        [NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD] = "server does not know a critical record we sent",
        [NTS_ERROR_SERVER_BAD_REQUEST]                  = "server refused our request as malformed",
        [NTS_ERROR_SERVER_INTERNAL_ERROR]               = "server reported an internal error",
        [NTS_ERROR_SERVER_UNKNOWN_ERROR]                = "server reported an unknown error",
        [NTS_ERROR_SERVER_WARNING]                      = "server sent a warning",

        [NTS_ERROR_KE_TRUNCATED]                        = "NTS-KE response ends before End of Message",
        [NTS_ERROR_KE_TOO_LONG]                         = "NTS-KE response is too long",
        [NTS_ERROR_KE_DATA_AFTER_END]                   = "NTS-KE response has data after End of Message",
        [NTS_ERROR_KE_BAD_RECORD_LENGTH]                = "NTS-KE record has an invalid length",
        [NTS_ERROR_KE_DUPLICATE_RECORD]                 = "NTS-KE record appeared more than once",
        [NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD]          = "NTS-KE response has an unknown critical record",
        [NTS_ERROR_KE_NO_NEXT_PROTOCOL]                 = "server did not agree to NTPv4",
        [NTS_ERROR_KE_NO_AEAD]                          = "NTS-KE response names no AEAD algorithm",
        [NTS_ERROR_KE_NO_COMMON_AEAD]                   = "server supports none of our AEAD algorithms",
        [NTS_ERROR_KE_AEAD_NOT_OFFERED]                 = "server chose an AEAD algorithm we did not offer",
        [NTS_ERROR_KE_NO_COOKIES]                       = "NTS-KE response has no cookies",
        [NTS_ERROR_KE_BAD_COOKIE]                       = "NTS-KE response has an empty or oversized cookie",
        [NTS_ERROR_KE_BAD_SERVER]                       = "NTS-KE response names an invalid NTP server",
        [NTS_ERROR_KE_BAD_PORT]                         = "NTS-KE response names NTP port 0",

        [NTS_ERROR_NTP_TRUNCATED]                       = "NTP response is truncated",
        [NTS_ERROR_NTP_BAD_EXTENSION_FIELD]             = "NTP response has a malformed extension field",
        [NTS_ERROR_NTP_NO_UID]                          = "NTP response lacks the Unique Identifier",
        [NTS_ERROR_NTP_UID_MISMATCH]                    = "NTP response does not echo our Unique Identifier",
        [NTS_ERROR_NTP_NO_AUTHENTICATOR]                = "NTP response lacks the NTS authenticator",
        [NTS_ERROR_NTP_BAD_AUTHENTICATOR]               = "NTP response has a malformed NTS authenticator",
        [NTS_ERROR_NTP_AUTH_FAILED]                     = "NTP response failed authentication",
        [NTS_ERROR_NTP_NO_COOKIES]                      = "NTP response carries no new cookie",
        [NTS_ERROR_NTP_NAK]                             = "server refused our cookie (NTSN)",
};

const char *NTS_error_string(NTS_Error e) {
        if ((unsigned) e >= ELEMENTSOF(nts_error_table))
                return NULL;
        return nts_error_table[e];
}

const char *NTS_aead_name(uint16_t id) {
        switch (id) {
        case NTS_AEAD_ID_AES_SIV_CMAC_256:
                return "AEAD_AES_SIV_CMAC_256";
        case NTS_AEAD_ID_AES_SIV_CMAC_384:
                return "AEAD_AES_SIV_CMAC_384";
        case NTS_AEAD_ID_AES_SIV_CMAC_512:
                return "AEAD_AES_SIV_CMAC_512";
        case NTS_AEAD_ID_AES_128_GCM_SIV:
                return "AEAD_AES_128_GCM_SIV";
        case NTS_AEAD_ID_AES_256_GCM_SIV:
                return "AEAD_AES_256_GCM_SIV";
        default:
                return NULL;
        }
}

/*
 * ProcessPrng for Wine 8, which lacks it: Rust's standard library imports it from
 * bcryptprimitives.dll (Windows 10 and later have the real one). Only the test prefix
 * gets this; tabwire ships nothing of it.
 */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    return BCryptGenRandom(NULL, data, (ULONG)length, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}

/* Stub for the sketch check (make sketch-check): lwIP re-exports the POSIX socket API. */
#include <netdb.h>

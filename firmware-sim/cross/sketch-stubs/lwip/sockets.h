/* Stub for the sketch check (make sketch-check): lwIP re-exports the POSIX socket API. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* The example configuration, as tm_config.h, for the Wi-Fi mode of the sketch check. */
#include "../../../arduino/tensormine/tm_config.example.h"

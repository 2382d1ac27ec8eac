// The listing helpers moved to record/file_list.h (the reader needs them
// without depending on the converter); this header keeps the converter's
// sources' includes valid.
#ifndef SHARDFEED_CONVERTER_FILE_LIST_H_
#define SHARDFEED_CONVERTER_FILE_LIST_H_

#include "record/file_list.h"

#endif  // SHARDFEED_CONVERTER_FILE_LIST_H_

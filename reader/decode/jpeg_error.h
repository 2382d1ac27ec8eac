// libjpeg's error reporting for our decoder and encoder: libjpeg calls
// error_exit on any error and it must not return, so JpegErrorExit formats
// the message into the manager and longjmps to the `jump` the caller set with
// setjmp. Callers create nothing with a destructor after setjmp.
#ifndef SHARDFEED_READER_DECODE_JPEG_ERROR_H_
#define SHARDFEED_READER_DECODE_JPEG_ERROR_H_

#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>

namespace shardfeed {

struct JpegErrorManager {
  jpeg_error_mgr pub;  // first member: libjpeg sees a jpeg_error_mgr*
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int code = 0;        // libjpeg's msg_code of the error
};

[[noreturn]] inline void JpegErrorExit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  e->code = cinfo->err->msg_code;
  (*cinfo->err->format_message)(cinfo, e->message);
  longjmp(e->jump, 1);
}

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_JPEG_ERROR_H_

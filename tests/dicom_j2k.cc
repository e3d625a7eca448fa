/* tests/dicom_j2k.cc IN OUT: writes the DICOM image IN again as OUT with its pixel data
 * compressed to JPEG 2000 (lossless), through GDCM, for the import's tests of compressed
 * files (tests/import_dicom.py): pydicom, which writes the test files, has no JPEG 2000
 * encoder of its own. Exit 0 on success, 1 with a line on stderr otherwise. */
#include <gdcmImageChangeTransferSyntax.h>
#include <gdcmImageReader.h>
#include <gdcmImageWriter.h>
#include <gdcmTrace.h>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
    return 1;
  }
  /* GDCM warns of the missing patient orientation, which a projection does not have. */
  gdcm::Trace::SetWarning(false);
  gdcm::Trace::SetError(false);
  gdcm::ImageReader r;
  r.SetFileName(argv[1]);
  if (!r.Read()) {
    std::fprintf(stderr, "%s: GDCM cannot read the image\n", argv[1]);
    return 1;
  }
  gdcm::ImageChangeTransferSyntax change;
  change.SetTransferSyntax(gdcm::TransferSyntax::JPEG2000Lossless);
  change.SetInput(r.GetImage());
  if (!change.Change()) {
    std::fprintf(stderr, "%s: GDCM cannot compress the image to JPEG 2000\n", argv[1]);
    return 1;
  }
  gdcm::ImageWriter w;
  w.SetFileName(argv[2]);
  w.SetFile(r.GetFile());
  w.SetImage(change.GetOutput());
  if (!w.Write()) {
    std::fprintf(stderr, "%s: GDCM cannot write the file\n", argv[2]);
    return 1;
  }
  return 0;
}

/* io/dicom.cc: the one C++ file of dbtr, a shim over GDCM for the DICOM import; its C
 * interface is in io/dicom_internal.h, and docs/dicom.md says why GDCM.
 *
 * The shim only reads: attribute values as numbers or strings, and decoded pixels. What
 * they mean is the C code's business (io/dicom_import.c, io/dicom_geom.c). Every entry
 * point catches what GDCM and the standard library throw and returns a dbtr error code
 * with a message naming the file, and GDCM's own warnings are switched off, so that the
 * user sees one line that names the cause. */
#include <gdcmDataSet.h>
#include <gdcmDicts.h>
#include <gdcmExplicitDataElement.h>
#include <gdcmImplicitDataElement.h>
#include <gdcmGlobal.h>
#include <gdcmPixmapReader.h>
#include <gdcmReader.h>
#include <gdcmSequenceOfItems.h>
#include <gdcmTrace.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "io/dicom_internal.h"
#include "recon/error.h"

struct dbtr__dcm {
  std::string path;
  gdcm::Reader header; /* every attribute before the pixel data */
};

namespace {

const uint32_t kPerFrame = DBTR__TAG(0x5200, 0x9230); /* Per-Frame Functional Groups Sequence */
const uint32_t kShared = DBTR__TAG(0x5200, 0x9229);   /* Shared Functional Groups Sequence */
const uint32_t kPixelData = DBTR__TAG(0x7FE0, 0x0010);

gdcm::Tag to_gdcm(uint32_t tag) { return gdcm::Tag(uint16_t(tag >> 16), uint16_t(tag & 0xFFFFu)); }

/* The VR the file gives, or the dictionary's where the file gives none (implicit VR). */
gdcm::VR vr_of(const gdcm::DataElement &de) {
  gdcm::VR vr = de.GetVR();
  if (vr == gdcm::VR::INVALID || vr == gdcm::VR::UN)
    vr = gdcm::Global::GetInstance().GetDicts().GetDictEntry(de.GetTag()).GetVR();
  return vr;
}

/* Finds tag in ds, or in the first item of any sequence of ds (one functional group
 * macro each). The element is copied out: its value is reference counted, so it outlives
 * the sequence it was found in. */
bool find_in_macros(const gdcm::DataSet &ds, const gdcm::Tag &tag, gdcm::DataElement &out) {
  for (gdcm::DataSet::ConstIterator it = ds.Begin(); it != ds.End(); ++it) {
    if (vr_of(*it) != gdcm::VR::SQ) continue;
    gdcm::SmartPointer<gdcm::SequenceOfItems> sq = it->GetValueAsSQ();
    if (!sq || sq->GetNumberOfItems() < 1) continue;
    const gdcm::DataSet &macro = sq->GetItem(1).GetNestedDataSet();
    if (macro.FindDataElement(tag)) {
      out = macro.GetDataElement(tag);
      return true;
    }
  }
  return false;
}

/* Item `index` (from 0) of the functional groups sequence `seq`, searched for tag. */
bool find_in_group(const gdcm::DataSet &top, uint32_t seq, size_t index, const gdcm::Tag &tag,
                   gdcm::DataElement &out) {
  gdcm::Tag s = to_gdcm(seq);
  if (!top.FindDataElement(s)) return false;
  gdcm::SmartPointer<gdcm::SequenceOfItems> sq = top.GetDataElement(s).GetValueAsSQ();
  if (!sq || index >= sq->GetNumberOfItems()) return false;
  return find_in_macros(sq->GetItem(index + 1).GetNestedDataSet(), tag, out);
}

bool find(const dbtr__dcm *d, uint32_t tag, long frame, gdcm::DataElement &out) {
  const gdcm::DataSet &top = d->header.GetFile().GetDataSet();
  gdcm::Tag t = to_gdcm(tag);
  if (frame >= 0 && (find_in_group(top, kPerFrame, size_t(frame), t, out) || find_in_group(top, kShared, 0, t, out)))
    return true;
  if (!top.FindDataElement(t)) return false;
  out = top.GetDataElement(t);
  return true;
}

std::string value_text(const gdcm::DataElement &de) {
  const gdcm::ByteValue *bv = de.GetByteValue();
  return bv ? std::string(bv->GetPointer(), bv->GetLength()) : std::string();
}

/* One value of a DS or IS string, trimmed in place: spaces and NUL padding around it are
 * allowed. */
bool parse_decimal(std::string &token, double *out) {
  size_t a = token.find_first_not_of(" \t"), b = token.find_last_not_of(std::string(" \t\0", 3));
  token = a == std::string::npos || b == std::string::npos || b < a ? std::string() : token.substr(a, b - a + 1);
  if (token.empty()) return false;
  char *end = nullptr;
  errno = 0;
  *out = std::strtod(token.c_str(), &end);
  return end == token.c_str() + token.size() && errno != ERANGE && std::isfinite(*out);
}

template <typename T> int binary_values(const gdcm::DataElement &de, double *out, int max) {
  std::string bytes = value_text(de);
  size_t n = bytes.size() / sizeof(T);
  for (size_t i = 0; i < n && i < size_t(max); i++) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = double(v);
  }
  return int(n);
}

/* All values of a numeric element; -1 for a value that is not a finite number. */
int numeric_values(const gdcm::DataElement &de, double *out, int max, std::string &bad) {
  switch (gdcm::VR::VRType(vr_of(de))) {
  case gdcm::VR::DS:
  case gdcm::VR::IS: {
    std::string text = value_text(de);
    int n = 0;
    for (size_t start = 0;; n++) {
      size_t stop = text.find('\\', start);
      std::string token = text.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
      double v;
      if (!parse_decimal(token, &v)) {
        bad = "'" + token + "' is not a number";
        return -1;
      }
      if (n < max) out[n] = v;
      if (stop == std::string::npos) return n + 1;
      start = stop + 1;
    }
  }
  case gdcm::VR::FD: return binary_values<double>(de, out, max);
  case gdcm::VR::FL: return binary_values<float>(de, out, max);
  case gdcm::VR::US: return binary_values<uint16_t>(de, out, max);
  case gdcm::VR::SS: return binary_values<int16_t>(de, out, max);
  case gdcm::VR::UL: return binary_values<uint32_t>(de, out, max);
  case gdcm::VR::SL: return binary_values<int32_t>(de, out, max);
  default: bad = std::string("stored as ") + gdcm::VR::GetVRString(vr_of(de)) + ", not as numbers"; return -1;
  }
}

template <typename T> void convert(const std::vector<char> &buf, double *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    T v;
    std::memcpy(&v, buf.data() + i * sizeof(T), sizeof(T));
    out[i] = double(v);
  }
}

/* The decoded buffer as doubles; false for a sample type dbtr does not read. */
bool convert_any(gdcm::PixelFormat::ScalarType type, const std::vector<char> &buf, double *out, size_t n) {
  using PF = gdcm::PixelFormat;
  static const struct {
    PF::ScalarType type;
    size_t size;
    void (*fn)(const std::vector<char> &, double *, size_t);
  } kinds[] = {{PF::UINT8, 1, convert<uint8_t>},   {PF::INT8, 1, convert<int8_t>},   {PF::UINT16, 2, convert<uint16_t>},
               {PF::INT16, 2, convert<int16_t>},   {PF::UINT32, 4, convert<uint32_t>}, {PF::INT32, 4, convert<int32_t>},
               {PF::FLOAT32, 4, convert<float>},  {PF::FLOAT64, 8, convert<double>}};
  for (const auto &k : kinds)
    if (k.type == type) {
      if (buf.size() / k.size < n) return false;
      k.fn(buf, out, n);
      return true;
    }
  return false;
}

/* A whole number at the top level of ds: def when absent, -1 when not one number. */
double top_number(const gdcm::DataSet &ds, uint32_t tag, double def) {
  gdcm::Tag t = to_gdcm(tag);
  if (!ds.FindDataElement(t) || ds.GetDataElement(t).IsEmpty()) return def;
  double v[2];
  std::string bad;
  return numeric_values(ds.GetDataElement(t), v, 2, bad) == 1 && v[0] == std::floor(v[0]) ? v[0] : -1.0;
}

/* The pixel data a file holds, against what its header declares, before a single value is
 * used: GDCM reads a truncated file with a warning and zeros in place of what is missing,
 * and decodes pixel data shorter than Rows x Columns x NumberOfFrames into zeros too.
 * - The file's length: its meta header and data set, as GDCM read them, against the bytes
 *   on the disk (GDCM takes the declared length of the last element, the pixel data).
 * - Native (uncompressed) pixel data: its length against Rows x Columns x NumberOfFrames x
 *   SamplesPerPixel x BitsAllocated / 8. Compressed frames are checked by their decoders. */
int check_pixels_whole(const gdcm::File &f, const char *path) {
  const gdcm::DataSet &ds = f.GetDataSet();
  const gdcm::TransferSyntax &ts = f.GetHeader().GetDataSetTransferSyntax();
  unsigned long long set = ts.IsExplicit() ? (unsigned long long)ds.GetLength<gdcm::ExplicitDataElement>()
                                           : (unsigned long long)ds.GetLength<gdcm::ImplicitDataElement>();
  unsigned long long want = (unsigned long long)f.GetHeader().GetFullLength() + set;
  FILE *fp = std::fopen(path, "rb");
  long long have = -1;
  if (fp && std::fseek(fp, 0, SEEK_END) == 0) have = std::ftell(fp);
  if (fp) std::fclose(fp);
  if (have >= 0 && (unsigned long long)have < want)
    return dbtr_err(DBTR_EFORMAT, "%s: the file has %lld bytes, its header and data declare %llu: truncated, %llu "
                    "bytes are missing (of its pixel data, if they are at its end)",
                    path, have, want, want - (unsigned long long)have);
  if (!ds.FindDataElement(to_gdcm(kPixelData))) return 0; /* refused where the pixels are read, by name */
  const uint32_t tags[5] = {DBTR__TAG(0x0028, 0x0010), DBTR__TAG(0x0028, 0x0011), DBTR__TAG(0x0028, 0x0008),
                            DBTR__TAG(0x0028, 0x0002), DBTR__TAG(0x0028, 0x0100)};
  const char *why[5] = {"an image has at least one row", "an image has at least one column",
                        "a multi-frame image has at least one frame", "a pixel has at least one sample",
                        "dbtr reads samples of whole bytes (a multiple of 8 bits)"};
  double v[5];
  for (int i = 0; i < 5; i++) {
    v[i] = top_number(ds, tags[i], i == 2 || i == 3 ? 1.0 : -1.0);
    /* Up to 2^31 each: the product below is then exact in double and checked against size_t. */
    if (!(v[i] >= 1.0 && v[i] <= 2147483648.0) || (i == 4 && std::fmod(v[i], 8.0) != 0.0))
      return dbtr_err(DBTR_EFORMAT, "%s: " DBTR__TAG_FMT ": %s; %s", path, DBTR__TAG_ARGS(tags[i]),
                      v[i] == -1.0 ? "missing or not a whole number" : std::to_string((long long)v[i]).c_str(),
                      why[i]);
  }
  if (ts.IsEncapsulated()) return 0;
  double need = v[0] * v[1] * v[2] * v[3] * (v[4] / 8.0);
  const gdcm::ByteValue *bv = ds.GetDataElement(to_gdcm(kPixelData)).GetByteValue();
  double got = bv ? double(bv->GetLength()) : 0.0;
  if (got < need)
    return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %.0f bytes; Rows x Columns x NumberOfFrames x "
                    "SamplesPerPixel x BitsAllocated/8 = %.0f x %.0f x %.0f x %.0f x %.0f/8 need %.0f",
                    path, got, v[0], v[1], v[2], v[3], v[4], need);
  return 0;
}

/* What GDCM or the library threw, as a dbtr error naming the file. */
int caught(const char *path) {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return dbtr_err(DBTR_ENOMEM, "%s: out of memory while reading the DICOM file", path);
  } catch (const std::exception &e) {
    return dbtr_err(DBTR_EFORMAT, "%s: GDCM cannot read the file (%s)", path, e.what());
  } catch (...) {
    return dbtr_err(DBTR_EFORMAT, "%s: GDCM cannot read the file", path);
  }
}

} // namespace

extern "C" {

int dbtr__dcm_open(dbtr__dcm **out, const char *path) {
  *out = nullptr;
  /* GDCM prints its warnings to stderr; our message names the cause instead. */
  gdcm::Trace::SetWarning(false);
  gdcm::Trace::SetError(false);
  FILE *f = std::fopen(path, "rb");
  if (!f) return dbtr_err(DBTR_EIO, "%s: cannot open: %s", path, std::strerror(errno));
  std::fclose(f);
  try {
    dbtr__dcm *d = new dbtr__dcm;
    d->path = path;
    d->header.SetFileName(path);
    if (!d->header.ReadUpToTag(to_gdcm(kPixelData))) {
      delete d;
      return dbtr_err(DBTR_EFORMAT, "%s: not a DICOM file, or a damaged one", path);
    }
    /* Binary values are copied as they are stored, little endian; the one big-endian
     * transfer syntax was retired from DICOM in 2004. */
    const gdcm::TransferSyntax &ts = d->header.GetFile().GetHeader().GetDataSetTransferSyntax();
    if (ts.GetSwapCode() == gdcm::SwapCode::BigEndian) {
      delete d;
      return dbtr_err(DBTR_EFORMAT, "%s: transfer syntax %s (big endian, retired) is not read", path, ts.GetString());
    }
    *out = d;
    return 0;
  } catch (...) {
    return caught(path);
  }
}

void dbtr__dcm_close(dbtr__dcm **d) {
  delete *d;
  *d = nullptr;
}

const char *dbtr__dcm_path(const dbtr__dcm *d) { return d->path.c_str(); }

const char *dbtr__dcm_keyword(uint32_t tag) {
  try {
    const char *k = gdcm::Global::GetInstance().GetDicts().GetDictEntry(to_gdcm(tag)).GetKeyword();
    return k && *k ? k : "(unknown)";
  } catch (...) {
    return "(unknown)";
  }
}

const char *dbtr__dcm_where(const dbtr__dcm *d, long frame, char *buf, size_t cap) {
  if (frame >= 0 && d->header.GetFile().GetDataSet().FindDataElement(to_gdcm(kPerFrame)))
    std::snprintf(buf, cap, "%s: frame %ld", d->path.c_str(), frame + 1);
  else
    std::snprintf(buf, cap, "%s", d->path.c_str());
  return buf;
}

int dbtr__dcm_numbers(const dbtr__dcm *d, uint32_t tag, long frame, double *out, int max) {
  try {
    gdcm::DataElement de;
    if (!find(d, tag, frame, de) || de.IsEmpty()) return 0;
    std::string bad;
    int n = numeric_values(de, out, max, bad);
    if (n >= 0) return n;
    char where[1200];
    return dbtr_err(DBTR_EFORMAT, "%s: (%04X,%04X) %s: %s", dbtr__dcm_where(d, frame, where, sizeof where),
                    unsigned(tag >> 16), unsigned(tag & 0xFFFFu), dbtr__dcm_keyword(tag), bad.c_str());
  } catch (...) {
    return caught(d->path.c_str());
  }
}

int dbtr__dcm_pixels(const dbtr__dcm *d, double *out, size_t n) {
  const char *path = d->path.c_str();
  try {
    gdcm::PixmapReader r;
    r.SetFileName(path);
    if (!r.Read()) {
      if (!d->header.GetFile().GetDataSet().FindDataElement(to_gdcm(kPixelData)))
        return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: missing", path);
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: GDCM cannot decode it (transfer syntax %s)", path,
                      d->header.GetFile().GetHeader().GetDataSetTransferSyntax().GetString());
    }
    int rc = check_pixels_whole(r.GetFile(), path);
    if (rc) return rc;
    const gdcm::Pixmap &pm = r.GetPixmap();
    const gdcm::PixelFormat &pf = pm.GetPixelFormat();
    if (pf.GetSamplesPerPixel() != 1)
      return dbtr_err(DBTR_EFORMAT, "%s: (0028,0002) SamplesPerPixel: %u; grayscale (1) is expected", path,
                      unsigned(pf.GetSamplesPerPixel()));
    size_t have = size_t(pm.GetDimension(0)) * pm.GetDimension(1) * (pm.GetNumberOfDimensions() > 2 ? pm.GetDimension(2) : 1);
    if (have != n)
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %zu pixels; Rows x Columns x NumberOfFrames say %zu",
                      path, have, n);
    std::vector<char> buf(pm.GetBufferLength());
    if (!pm.GetBuffer(buf.data()))
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: GDCM cannot decode it", path);
    if (!convert_any(pf.GetScalarType(), buf, out, n))
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %zu bytes of %s samples; 8, 16 or 32-bit integers or floats of %zu pixels are read",
                      path, buf.size(), pf.GetScalarTypeAsString(), n);
    return 0;
  } catch (...) {
    return caught(path);
  }
}

int dbtr__dcm_check(const char *path) {
  gdcm::Trace::SetWarning(false);
  gdcm::Trace::SetError(false);
  try {
    gdcm::Reader r;
    r.SetFileName(path);
    if (!r.Read()) return dbtr_err(DBTR_EFORMAT, "%s: not a DICOM file, or a damaged one", path);
    return check_pixels_whole(r.GetFile(), path);
  } catch (...) {
    return caught(path);
  }
}

int dbtr__dcm_has(const dbtr__dcm *d, uint32_t tag) {
  try {
    return d->header.GetFile().GetDataSet().FindDataElement(to_gdcm(tag)) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void dbtr__dcm_string(const dbtr__dcm *d, uint32_t tag, char *out, size_t cap) {
  out[0] = '\0';
  try {
    gdcm::DataElement de;
    if (!find(d, tag, -1, de)) return;
    std::string s = value_text(de);
    size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(std::string(" \0", 2));
    s = a == std::string::npos || b == std::string::npos || b < a ? std::string() : s.substr(a, b - a + 1);
    std::snprintf(out, cap, "%s", s.c_str());
    for (char *c = out; *c; c++)
      if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
  } catch (...) {
    out[0] = '\0';
  }
}

} // extern "C"

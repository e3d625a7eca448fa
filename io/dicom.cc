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
#include <gdcmBoxRegion.h>
#include <gdcmGlobal.h>
#include <gdcmImageRegionReader.h>
#include <gdcmJPEG2000Codec.h>
#include <gdcmPixmapReader.h>
#include <gdcmReader.h>
#include <gdcmSequenceOfItems.h>
#include <gdcmTrace.h>
#include <gdcmUIDs.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
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

template <typename T> void convert(const unsigned char *buf, double *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    T v;
    std::memcpy(&v, buf + i * sizeof(T), sizeof(T));
    out[i] = double(v);
  }
}

/* The sample types dbtr reads, with their sizes and conversions to double. */
using PF = gdcm::PixelFormat;
const struct {
  PF::ScalarType type;
  size_t size;
  void (*fn)(const unsigned char *, double *, size_t);
} kSampleTypes[] = {{PF::UINT8, 1, convert<uint8_t>},    {PF::INT8, 1, convert<int8_t>},
                    {PF::UINT16, 2, convert<uint16_t>},  {PF::INT16, 2, convert<int16_t>},
                    {PF::UINT32, 4, convert<uint32_t>},  {PF::INT32, 4, convert<int32_t>},
                    {PF::FLOAT32, 4, convert<float>},    {PF::FLOAT64, 8, convert<double>}};

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

/* A transfer syntax in messages: "JPEG 2000 Image Compression (Lossless Only)". */
std::string ts_name(const gdcm::TransferSyntax &ts) {
  gdcm::UIDs uid;
  const char *name = ts.GetString() && uid.SetFromUID(ts.GetString()) ? uid.GetName() : nullptr;
  return name && *name ? name : std::string("transfer syntax ") + (ts.GetString() ? ts.GetString() : "?");
}

/* "bpxi.dcm: frame 4" for frame k (from 0) of a multi-frame file; the path alone for a
 * single frame, or k < 0 (no frame known). */
std::string frame_where(const char *path, long k, unsigned long frames) {
  return k < 0 || frames < 2 ? std::string(path) : std::string(path) + ": frame " + std::to_string(k + 1);
}

/* JPEG 2000 frames against the header, before one is decoded. GDCM 3.0 decodes each
 * fragment of a multi-frame object as one frame and trusts it to hold Columns x Rows
 * samples: a larger frame was written past its buffer (heap corruption, an abort), a
 * smaller one imported as good with the frame's pixels shifted; a frame of 8-bit samples in
 * a file of 16 (or the reverse) crashed it too. So each frame's own header (its SIZ marker,
 * read by OpenJPEG through GDCM's codec, nothing decoded) must say Columns x Rows of one
 * sample of the file's BitsAllocated. A frame whose header cannot be read is named too. */
int check_j2k_frames(const gdcm::Pixmap &pm, const char *path, unsigned cols, unsigned rows, unsigned long frames) {
  unsigned bits = pm.GetPixelFormat().GetBitsAllocated();
  const gdcm::SequenceOfFragments *sf = pm.GetDataElement().GetSequenceOfFragments();
  size_t nf = sf ? sf->GetNumberOfFragments() : 0;
  if (nf == 0 || (frames > 1 && nf != frames))
    return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %zu JPEG 2000 fragments for %lu frames; one fragment a "
                    "frame is read", path, nf, frames);
  for (unsigned long k = 0; k < frames; k++) {
    std::string bytes;
    if (frames > 1) {
      const gdcm::ByteValue *bv = sf->GetFragment(k).GetByteValue();
      if (bv) bytes.assign(bv->GetPointer(), bv->GetLength());
    } else {
      bytes.resize(sf->ComputeByteLength());
      if (bytes.empty() || !sf->GetBuffer(&bytes[0], (unsigned long)bytes.size())) bytes.clear();
    }
    std::istringstream is(bytes);
    gdcm::JPEG2000Codec codec;
    gdcm::TransferSyntax ts;
    std::string where = frame_where(path, long(k), frames);
    if (bytes.empty() || !codec.GetHeaderInfo(is, ts))
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: the JPEG 2000 header of the frame cannot be read; "
                      "the frame is damaged", where.c_str());
    const unsigned *dim = codec.GetDimensions();
    unsigned spp = codec.GetPixelFormat().GetSamplesPerPixel(), fbits = codec.GetPixelFormat().GetBitsAllocated();
    if (dim[0] != cols || dim[1] != rows || spp != 1 || fbits != bits)
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: a JPEG 2000 frame of %u x %u pixels, %u sample%s of %u "
                      "bits; (0028,0011) Columns, (0028,0010) Rows and (0028,0100) BitsAllocated say %u x %u, 1 of %u",
                      where.c_str(), dim[0], dim[1], spp, spp == 1 ? "" : "s", fbits, cols, rows, bits);
  }
  return 0;
}

/* The first frame GDCM cannot decode alone, read by its region reader a frame at a time,
 * for the message when decoding all of them failed; -1 when none fails alone, or none
 * decodes (then the cause is not one frame's). */
long failing_frame(const char *path, unsigned cols, unsigned rows, unsigned long frames) {
  gdcm::ImageRegionReader rr;
  rr.SetFileName(path);
  if (frames < 2 || !rr.ReadInformation()) return -1;
  long first = -1;
  bool any = false;
  for (unsigned long k = 0; k < frames; k++) {
    gdcm::BoxRegion box;
    box.SetDomain(0, cols - 1, 0, rows - 1, unsigned(k), unsigned(k));
    rr.SetRegion(box);
    std::vector<char> buf(rr.ComputeBufferLength());
    if (!buf.empty() && rr.ReadIntoBuffer(buf.data(), buf.size()))
      any = true;
    else if (first < 0)
      first = long(k);
  }
  return any ? first : -1;
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

int dbtr__dcm_decode(const dbtr__dcm *d, size_t n, dbtr__dcm_samples *raw) {
  const char *path = d->path.c_str();
  /* Set here too: in a guarded child this may be the first of the shim's calls. */
  gdcm::Trace::SetWarning(false);
  gdcm::Trace::SetError(false);
  try {
    gdcm::PixmapReader r;
    r.SetFileName(path);
    const gdcm::TransferSyntax &ts = d->header.GetFile().GetHeader().GetDataSetTransferSyntax();
    if (!r.Read()) {
      if (!d->header.GetFile().GetDataSet().FindDataElement(to_gdcm(kPixelData)))
        return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: missing", path);
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: GDCM cannot decode it (%s)", path,
                      ts_name(ts).c_str());
    }
    int rc = check_pixels_whole(r.GetFile(), path);
    if (rc) return rc;
    const gdcm::Pixmap &pm = r.GetPixmap();
    const gdcm::PixelFormat &pf = pm.GetPixelFormat();
    if (pf.GetSamplesPerPixel() != 1)
      return dbtr_err(DBTR_EFORMAT, "%s: (0028,0002) SamplesPerPixel: %u; grayscale (1) is expected", path,
                      unsigned(pf.GetSamplesPerPixel()));
    unsigned cols = pm.GetDimension(0), rows = pm.GetDimension(1);
    unsigned long frames = pm.GetNumberOfDimensions() > 2 ? pm.GetDimension(2) : 1;
    size_t have = size_t(cols) * rows * frames;
    if (have != n)
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %zu pixels; Rows x Columns x NumberOfFrames say %zu",
                      path, have, n);
    if (gdcm::JPEG2000Codec().CanDecode(ts) && (rc = check_j2k_frames(pm, path, cols, rows, frames))) return rc;
    size_t size = 0, len = pm.GetBufferLength();
    for (const auto &k : kSampleTypes)
      if (k.type == pf.GetScalarType()) size = k.size;
    if (size == 0 || len != n * size || len > raw->cap)
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: %zu bytes of %s samples; 8, 16 or 32-bit integers or "
                      "floats of %zu pixels are read", path, len, pf.GetScalarTypeAsString(), n);
    if (!pm.GetBuffer(reinterpret_cast<char *>(raw->data))) {
      long k = failing_frame(path, cols, rows, frames);
      return dbtr_err(DBTR_EFORMAT, "%s: (7FE0,0010) PixelData: GDCM cannot decode %s (%s)",
                      frame_where(path, k, frames).c_str(), k < 0 ? "it" : "this frame", ts_name(ts).c_str());
    }
    raw->type = int(pf.GetScalarType());
    return 0;
  } catch (...) {
    return caught(path);
  }
}

int dbtr__dcm_convert(const dbtr__dcm_samples *raw, double *out, size_t n) {
  for (const auto &k : kSampleTypes)
    if (int(k.type) == raw->type && n * k.size <= raw->cap) {
      k.fn(raw->data, out, n);
      return 0;
    }
  return dbtr_err(DBTR_EINTERNAL, "DICOM import: decoded samples of unknown type %d", raw->type);
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
